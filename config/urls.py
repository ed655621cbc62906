from __future__ import annotations

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from finance.api.errors import api_not_found
from finance.views.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("api/v1/", include("config.api_router")),
    re_path(r"^api(?:/.*)?$", api_not_found),
    path("admin/", admin.site.urls),
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
    path("favicon.ico", RedirectView.as_view(url=static("finance/favicon.svg"), permanent=True)),
]

handler404 = "finance.api.errors.handler404"
handler500 = "finance.api.errors.handler500"
