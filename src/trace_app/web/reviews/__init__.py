"""Reviews: the queue of results a person should decide, and their decisions."""
