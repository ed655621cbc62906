from django.apps import AppConfig


class FinanceConfig(AppConfig):
    name = "finance"
    verbose_name = "Household finances"
    default_auto_field = "django.db.models.BigAutoField"
