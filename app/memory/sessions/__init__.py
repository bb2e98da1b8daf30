"""Session memory (S1-S17): sessions, their memory commands and switches, forks and versions."""
