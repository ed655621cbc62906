from django.apps import AppConfig


class FinanceConfig(AppConfig):
    name = "finance"
    verbose_name = "Household finances"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The admin of API keys lives in its own module (finance/admin.py holds the ledger's).
        from finance import admin_keys  # noqa: F401
