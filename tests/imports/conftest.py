from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
