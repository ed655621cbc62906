from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _export_dirs(settings, tmp_path):
    """Archives and uploads under this test's own directory."""
    settings.EXPORTS_DIR = tmp_path / "exports"
    settings.RESTORES_DIR = tmp_path / "restores"
