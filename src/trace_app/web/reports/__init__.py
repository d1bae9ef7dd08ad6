"""Reports: publishing (the API and the form), a report, an incident's reports."""
