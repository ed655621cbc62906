from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate

# A migration that rebuilds a SQLite table drops its triggers, so after every `migrate` each
# trigger-kept structure is re-ensured, while the migration that made it is applied (not after
# migrating back to before it): (migration, module, function).
_ENSURED_AFTER_MIGRATE = (
    ("0004_transaction_search_sqlite", "finance.ledger.db.search_sqlite", "search_index_ensure"),
    ("0005_transaction_tag_date", "finance.ledger.db.tag_dates", "tag_dates_ensure"),
    ("0007_transaction_count", "finance.ledger.db.row_counts", "row_counts_ensure"),
)


def _triggers_ensure(sender: Any, using: str = "default", **kwargs: Any) -> None:
    from importlib import import_module

    from django.db import connections
    from django.db.migrations.recorder import MigrationRecorder

    applied = set(
        MigrationRecorder(connections[using])
        .migration_qs.filter(app="finance", name__in=[m for m, _, _ in _ENSURED_AFTER_MIGRATE])
        .values_list("name", flat=True)
    )
    for migration, module, function in _ENSURED_AFTER_MIGRATE:
        if migration in applied:
            getattr(import_module(module), function)(using=using)


class FinanceConfig(AppConfig):
    name = "finance"
    verbose_name = "Household finances"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The admin of API keys lives in its own module (finance/admin.py holds the ledger's).
        # Register the tasks, which services queue by name (core/tasks.py), and the `__any`
        # lookup (core/lookups.py).
        from core import lookups  # noqa: F401
        from finance import admin_fx, admin_keys, tasks  # noqa: F401

        post_migrate.connect(_triggers_ensure, sender=self)
