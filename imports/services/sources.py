"""The `source` of the transactions an import writes: upstream ids keep their format's name,
content fingerprints are `import` (dedup looks for the same)."""

from __future__ import annotations

from imports.models import Import

SOURCES = {
    Import.Type.OFX: "ofx",
    Import.Type.CAMT053: "camt053",
    Import.Type.MT940: "mt940",
}
DEFAULT_SOURCE = "import"  # CSV and QIF: content fingerprints


def import_source(data_import: Import) -> str:
    return SOURCES.get(data_import.type, DEFAULT_SOURCE)
