"""The project's admin site: the household's interface. Logins are throttled per client
address and per email after repeated failures, counted across every process (`config.cache`)."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from config.cache import count_hit

LOGIN_FAILURE_LIMIT = 5
LOGIN_FAILURE_WINDOW = 15 * 60  # seconds


def _client_ip(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")


def _keys(request: HttpRequest, username: str | None) -> list[str]:
    keys = [f"login-fail:ip:{_client_ip(request)}"]
    if username:
        keys.append(f"login-fail:user:{username.strip().lower()}")
    return keys


def login_blocked(request: HttpRequest, username: str | None) -> bool:
    return any((cache.get(key) or 0) >= LOGIN_FAILURE_LIMIT for key in _keys(request, username))


@receiver(user_login_failed)
def _count_login_failure(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    if request is None:
        return
    for key in _keys(request, credentials.get("username") or credentials.get("email")):
        count_hit(key, timeout=LOGIN_FAILURE_WINDOW)


class FinanceAdminSite(admin.AdminSite):
    site_header = "Household finances"
    site_title = "Household finances"
    index_title = "Your household"
    site_url = None  # the site is the admin: "/" redirects here, so no "View site" link

    def index(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """A household user's home is their dashboard; superusers get the plain index."""
        family = getattr(request.user, "family", None)
        if family is None or request.user.is_superuser:
            return super().index(request, extra_context)
        from finance.charts import bar_chart, cash_flow_chart, line_chart
        from finance.selectors.dashboard import dashboard_context

        data = dashboard_context(family=family)
        context = {
            **self.each_context(request),
            **data,
            "title": family.name,
            "net_worth_chart": line_chart(
                data["net_worth"], currency=family.currency, label="net worth"
            ),
            "cash_flow_chart": cash_flow_chart(data["cash_flow"], currency=family.currency),
            "spending_chart": bar_chart(
                data["spending"], currency=family.currency, label="spending by category"
            ),
            **(extra_context or {}),
        }
        request.current_app = self.name
        return TemplateResponse(request, "admin/dashboard.html", context)

    def login(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if request.method == "POST" and login_blocked(request, request.POST.get("username")):
            context = {
                **self.each_context(request),
                "title": "Too many attempts",
                "minutes": LOGIN_FAILURE_WINDOW // 60,
            }
            return TemplateResponse(request, "admin/login_throttled.html", context, status=429)
        return super().login(request, extra_context)


class FinanceAdminConfig(AdminConfig):
    default_site = "config.admin.FinanceAdminSite"


__all__ = ["FinanceAdminConfig", "FinanceAdminSite", "apps"]
