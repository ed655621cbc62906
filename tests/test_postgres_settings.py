"""PostgreSQL connections are opened without the JIT (config/settings/base.py): a short
statement whose estimate ran high (statistics lagging behind a grown table) was compiled for
longer than it ran."""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's own setting")
def test_the_jit_is_off_for_our_connections():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('jit')")
        assert cursor.fetchone()[0] == "off"
