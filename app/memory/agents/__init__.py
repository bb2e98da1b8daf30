"""Agent memory (A1-A12): agents, their lasting entries, who sees which, and promotion."""
