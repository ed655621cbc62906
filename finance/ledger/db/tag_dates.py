"""The transaction's date and household copied onto its tag links, kept by database triggers.

`GET /transactions?tag_ids[]=` pages by date: with the date on the link rows one index,
`(tag, family, date DESC, transaction DESC)` (migration 0005), gives a tag's page in order and
its exact count, instead of walking the household's date index probing the link table and
joining every link back to its transaction to count. Links and transactions are written by the
ORM, `bulk_create`, `.update()`, `bulk_update` and raw COPY / executemany (imports, provider
syncs, admin batch actions, the bench seeder), so the copies are kept by the database:

- a link inserted (or moved to another transaction) takes its transaction's date and household;
- a transaction whose date or household changes passes them on to its links.

A link must be inserted after its transaction (every writer here does: the foreign key is only
checked at commit, so a link written first would keep a NULL date). Django rebuilds a SQLite
table when a migration alters it, which drops its triggers, so `tag_dates_ensure` runs after
every `migrate` (finance/apps.py), as the search index's does: it recreates missing triggers and
then repairs any copy written while they were gone."""

# ruff: noqa: S608 - every statement is built from this module's constant names, never input.
from __future__ import annotations

from django.db import connections, transaction

from finance.ledger.db.triggers import Deferred, triggers_missing

TABLE = "finance_transaction"
LINKS = "finance_transaction_tags"
TRIGGERS = ("finance_txn_tag_copy", "finance_txn_tag_copy_moved", "finance_txn_tag_follow")

_POSTGRES = [
    f"""CREATE OR REPLACE FUNCTION {TRIGGERS[0]}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        SELECT t.date, t.family_id INTO NEW.date, NEW.family_id
            FROM {TABLE} t WHERE t.id = NEW.transaction_id;
        RETURN NEW;
    END $$""",
    f"""CREATE OR REPLACE FUNCTION {TRIGGERS[2]}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE {LINKS} SET date = NEW.date, family_id = NEW.family_id
            WHERE transaction_id = NEW.id;
        RETURN NULL;
    END $$""",
    f"DROP TRIGGER IF EXISTS {TRIGGERS[0]} ON {LINKS}",
    # BEFORE: the copy is in the row as written, so the link index never sees a NULL date.
    f"""CREATE TRIGGER {TRIGGERS[0]} BEFORE INSERT OR UPDATE OF transaction_id ON {LINKS}
        FOR EACH ROW EXECUTE FUNCTION {TRIGGERS[0]}()""",
    f"DROP TRIGGER IF EXISTS {TRIGGERS[2]} ON {TABLE}",
    f"""CREATE TRIGGER {TRIGGERS[2]} AFTER UPDATE OF date, family_id ON {TABLE} FOR EACH ROW
        WHEN (OLD.date IS DISTINCT FROM NEW.date OR OLD.family_id IS DISTINCT FROM NEW.family_id)
        EXECUTE FUNCTION {TRIGGERS[2]}()""",
]
_POSTGRES_REPAIR = f"""UPDATE {LINKS} l SET date = t.date, family_id = t.family_id
    FROM {TABLE} t WHERE t.id = l.transaction_id
    AND (l.date IS DISTINCT FROM t.date OR l.family_id IS DISTINCT FROM t.family_id)"""

# SQLite triggers cannot change NEW: an AFTER INSERT trigger updates the new link by rowid.
_SQLITE_COPY = f"""UPDATE {LINKS} SET (date, family_id) =
    (SELECT t.date, t.family_id FROM {TABLE} t WHERE t.id = new.transaction_id)
    WHERE id = new.id;"""
_SQLITE = [
    f"CREATE TRIGGER IF NOT EXISTS {TRIGGERS[0]} AFTER INSERT ON {LINKS} BEGIN {_SQLITE_COPY} END",
    f"""CREATE TRIGGER IF NOT EXISTS {TRIGGERS[1]} AFTER UPDATE OF transaction_id ON {LINKS}
        BEGIN {_SQLITE_COPY} END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TRIGGERS[2]} AFTER UPDATE OF date, family_id ON {TABLE}
        WHEN old.date IS NOT new.date OR old.family_id IS NOT new.family_id BEGIN
        UPDATE {LINKS} SET date = new.date, family_id = new.family_id
            WHERE transaction_id = new.id;
    END""",
]
# The insert trigger's work for every link above an id: a large insert's (deferred.py).
SQLITE_INSERT = (
    Deferred(
        table=LINKS,
        name=TRIGGERS[0],
        create=_SQLITE[0],
        derive=(
            f"""UPDATE {LINKS} SET (date, family_id) =
                (SELECT t.date, t.family_id FROM {TABLE} t WHERE t.id = transaction_id)
                WHERE id > %s""",
        ),
    ),
)
_SQLITE_REPAIR = f"""UPDATE {LINKS} SET (date, family_id) =
    (SELECT t.date, t.family_id FROM {TABLE} t WHERE t.id = transaction_id)
    WHERE EXISTS (SELECT 1 FROM {TABLE} t WHERE t.id = transaction_id
        AND (t.date IS NOT {LINKS}.date OR t.family_id IS NOT {LINKS}.family_id))"""


def tag_dates_ensure(*, using: str = "default") -> int | None:
    """Create missing triggers, then repair the copies they missed; links repaired, or None
    when every trigger was in place (nothing to do)."""
    connection = connections[using]
    vendor = connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        return None
    with connection.cursor() as cursor:
        wanted = TRIGGERS if vendor == "sqlite" else (TRIGGERS[0], TRIGGERS[2])
        if not triggers_missing(cursor, vendor, wanted):
            return None
        with transaction.atomic(using=using):
            for sql in _SQLITE if vendor == "sqlite" else _POSTGRES:
                cursor.execute(sql)
            cursor.execute(_SQLITE_REPAIR if vendor == "sqlite" else _POSTGRES_REPAIR)
            return max(cursor.rowcount, 0)


def tag_dates_drop(*, using: str = "default") -> None:
    connection = connections[using]
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            for name in TRIGGERS:
                cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
        elif connection.vendor == "postgresql":
            cursor.execute(f"DROP TRIGGER IF EXISTS {TRIGGERS[0]} ON {LINKS}")
            cursor.execute(f"DROP TRIGGER IF EXISTS {TRIGGERS[2]} ON {TABLE}")
            cursor.execute(f"DROP FUNCTION IF EXISTS {TRIGGERS[0]}()")
            cursor.execute(f"DROP FUNCTION IF EXISTS {TRIGGERS[2]}()")
