from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "providers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the tasks, which services queue by name (core/tasks.py).
        from providers import tasks  # noqa: F401
