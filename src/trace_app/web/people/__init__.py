"""People: the People page and search, a person's page and API, same-person decisions."""
