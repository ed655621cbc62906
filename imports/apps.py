from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "imports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the tasks, which services queue by name (core/tasks.py).
        from imports import tasks  # noqa: F401
