"""Agents: their sessions, lasting memory, learning jobs, promotion and mutations."""
