from django.apps import AppConfig


class TradesConfig(AppConfig):
    name = "trades"
    default_auto_field = "django.db.models.BigAutoField"
