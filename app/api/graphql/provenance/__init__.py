"""Provenance: an entry's story, what an item supports, what a turn was shown."""
