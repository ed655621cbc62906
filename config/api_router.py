"""Every `/api/v1` route. Each app contributes its viewsets here."""

from __future__ import annotations

from django.urls import include, path
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiYamlRenderer
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny
from rest_framework.routers import SimpleRouter

from exports.views import register as register_exports
from finance.views import register as register_finance
from finance.views import report_urls as finance_report_urls
from imports.views import register as register_imports
from providers.views import register as register_providers
from trades.views import register as register_trades

router = SimpleRouter(trailing_slash=False)
register_finance(router)
register_trades(router)
register_imports(router)
register_providers(router)
register_exports(router)

_public = {"authentication_classes": [], "permission_classes": [AllowAny], "throttle_classes": []}

urlpatterns = [
    path(
        "openapi.json",
        SpectacularAPIView.as_view(renderer_classes=[OpenApiJsonRenderer], **_public),
        name="openapi-json",
    ),
    path(
        "openapi.yaml",
        SpectacularAPIView.as_view(renderer_classes=[OpenApiYamlRenderer], **_public),
        name="openapi-yaml",
    ),
    path(
        "docs", SpectacularSwaggerView.as_view(url_name="openapi-json", **_public), name="api-docs"
    ),
    *finance_report_urls(),
    path("", include(router.urls)),
]
