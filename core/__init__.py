"""Pieces every app shares that know nothing of HTTP: application errors, task enqueueing."""
