"""Turns: recording them, and the memory text their model is given (S5, S6, A8)."""
