from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"
    verbose_name = "Export and restore"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Register the tasks, which services queue by name (core/tasks.py).
        from exports import tasks  # noqa: F401
