"""Partner webhooks and the deliveries list over the API (issue 41)."""
