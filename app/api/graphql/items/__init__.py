"""A session's timeline: its items and the turns they came in."""
