"""Writes of imports: create and parse, mappings, dedup, publish, revert, verification, settling."""
