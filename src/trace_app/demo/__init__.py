"""The seeded demo ("Flood Relief Demo") and Reset."""

from trace_app.demo.seed import (
    after_reset_hooks,
    ensure_seeded,
    hospital_example_input,
    reset_demo,
    seed_demo,
)

__all__ = [
    "after_reset_hooks",
    "ensure_seeded",
    "hospital_example_input",
    "reset_demo",
    "seed_demo",
]
