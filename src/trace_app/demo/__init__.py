"""The seeded demo ("Flood Relief Demo"); the app's Reset is ``trace_app.demo_reset``."""

from trace_app.demo.seed import (
    hospital_example_input,
    is_empty,
    reset_demo,
    seed_demo,
)

__all__ = [
    "hospital_example_input",
    "is_empty",
    "reset_demo",
    "seed_demo",
]
