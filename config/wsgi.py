import os

from django.core.wsgi import get_wsgi_application

from config.warmup import heap_freeze

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
application = get_wsgi_application()

from finance.api.middleware import ChunkedBodyLimit  # noqa: E402 (needs the settings loaded)

application = ChunkedBodyLimit(application)
heap_freeze()
