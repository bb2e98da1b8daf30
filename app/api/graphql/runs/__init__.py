"""Consolidation runs."""
