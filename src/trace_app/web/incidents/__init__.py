"""Incidents: the home page, the incidents API, a new incident, its time zone, Reset demo."""
