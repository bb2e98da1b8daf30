"""OpenBot memory service: what agents learn, where each fact came from, and how it changed."""
