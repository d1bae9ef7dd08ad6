"""The load test's users (Locust): 70% search, 20% person page, 10% publish, each user
signed in with an API token made by ``trace token create``, spread over the replicas.

Run by ``bench/load/run_load.py``, which writes the plan this file reads from the file
named by ``TRACE_LOAD_PLAN`` (JSON: replica URLs, incident id, tokens, person ids, search
queries). Locust is imported here only: nothing of the app imports this file.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from typing import Any

from locust import FastHttpUser, between, task

PLAN: dict[str, Any] = json.loads(open(os.environ["TRACE_LOAD_PLAN"], encoding="utf-8").read())
_numbers = itertools.count()


class Volunteer(FastHttpUser):
    """One person at a desk: searches, opens a person, now and then publishes."""

    wait_time = between(0.05, 0.25)
    host = PLAN["replicas"][0]

    def on_start(self) -> None:
        number = next(_numbers)
        self.replica = PLAN["replicas"][number % len(PLAN["replicas"])]
        token = PLAN["tokens"][number % len(PLAN["tokens"])]
        self.headers = {"Authorization": f"Bearer {token}"}
        self.rng = random.Random(number)

    @task(70)
    def search(self) -> None:
        q = self.rng.choice(PLAN["queries"])
        self.client.get(
            f"{self.replica}/api/incidents/{PLAN['incident_id']}/people",
            params={"q": q, "limit": "20"},
            headers=self.headers,
            name="search",
        )

    @task(20)
    def person_page(self) -> None:
        person_id = self.rng.choice(PLAN["person_ids"])
        self.client.get(
            f"{self.replica}/api/people/{person_id}", headers=self.headers, name="person page"
        )

    @task(10)
    def publish(self) -> None:
        name = self.rng.choice(PLAN["names"])
        self.client.post(
            f"{self.replica}/api/reports",
            json={
                "incident_id": PLAN["incident_id"],
                "summary": f"{name} was seen at the camp.",
                "original_text": f"A volunteer saw {name} at the camp this morning.",
                "person": {"name": name},
                "status": "seen",
                "location": "Camp 2",
            },
            headers=self.headers,
            name="publish",
        )
