"""Erasures: erasing a person's data, and the record each erasure leaves."""
