from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _search_index_ensure(sender: Any, using: str = "default", **kwargs: Any) -> None:
    # A migration that rebuilds the SQLite transaction table drops its search triggers.
    from django.db import connections
    from django.db.migrations.recorder import MigrationRecorder

    from finance.search_sqlite import search_index_ensure

    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    applied = MigrationRecorder(connection).migration_qs.filter(
        app="finance", name="0004_transaction_search_sqlite"
    )
    if applied.exists():  # not after migrating back to before the index
        search_index_ensure(using=using)


def _tag_dates_ensure(sender: Any, using: str = "default", **kwargs: Any) -> None:
    # A migration that rebuilds a SQLite table drops the triggers keeping the tag links' dates.
    from django.db import connections
    from django.db.migrations.recorder import MigrationRecorder

    from finance.tag_dates import tag_dates_ensure

    applied = MigrationRecorder(connections[using]).migration_qs.filter(
        app="finance", name="0005_transaction_tag_date"
    )
    if applied.exists():  # not after migrating back to before the copies
        tag_dates_ensure(using=using)


def _row_counts_ensure(sender: Any, using: str = "default", **kwargs: Any) -> None:
    # A migration that rebuilds the SQLite transaction table drops the counters' triggers.
    from django.db import connections
    from django.db.migrations.recorder import MigrationRecorder

    from finance.row_counts import row_counts_ensure

    applied = MigrationRecorder(connections[using]).migration_qs.filter(
        app="finance", name="0007_transaction_count"
    )
    if applied.exists():  # not after migrating back to before the counters
        row_counts_ensure(using=using)


class FinanceConfig(AppConfig):
    name = "finance"
    verbose_name = "Household finances"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The admin of API keys lives in its own module (finance/admin.py holds the ledger's).
        from finance import admin_keys  # noqa: F401

        post_migrate.connect(_search_index_ensure, sender=self)
        post_migrate.connect(_tag_dates_ensure, sender=self)
        post_migrate.connect(_row_counts_ensure, sender=self)
