"""Reads across sessions and agents: provenance stories, keyset pages, search and live views."""
