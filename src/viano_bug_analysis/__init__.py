"""Viano bug analysis: supplied bug-report packages, canonical cases, interpretation."""
