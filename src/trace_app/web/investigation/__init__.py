"""The investigation over the web: its routes and what pages show of its saved results."""
