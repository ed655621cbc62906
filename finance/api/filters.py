"""Query-string filters live in `core.filters` (selectors use them too)."""

from core.filters import QueryFilters

__all__ = ["QueryFilters"]
