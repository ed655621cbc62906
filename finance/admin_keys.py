"""API keys in the admin: a household user creates keys (name, scope, optional expiry), sees
each key once with a copy button, sees prefix, scope and last use, and revokes them. A
household user sees only their own keys; superusers see all."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.html import format_html

from finance.admin_base import HouseholdAdmin
from finance.labels import counted
from finance.models import ApiKey
from finance.services.api_keys import api_key_create, api_key_revoke


class ApiKeyCreateForm(forms.ModelForm):
    class Meta:
        model = ApiKey
        fields = ("name", "scope", "expires_at")
        help_texts = {"expires_at": "Optional. Leave empty for a key that does not expire."}

    def clean_expires_at(self) -> Any:
        value = self.cleaned_data.get("expires_at")
        if value is not None and value <= timezone.now():
            raise forms.ValidationError("The expiry must be in the future.")
        return value


@admin.register(ApiKey)
class ApiKeyAdmin(HouseholdAdmin):
    family_path = "user__family"
    list_display = (
        "name",
        "masked_prefix",
        "scope",
        "state",
        "last_used_at",
        "expires_at",
        "created_at",
    )
    list_filter = ("scope",)
    search_fields = ("name", "prefix")
    actions = ("revoke_keys",)
    readonly_fields = (
        "masked_prefix",
        "scope",
        "state",
        "user",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request).select_related("user")
        return qs if request.user.is_superuser else qs.filter(user=request.user)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        if obj is None:
            kwargs["form"] = ApiKeyCreateForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ("name", "scope", "expires_at")
        return (
            "name",
            "masked_prefix",
            "scope",
            "state",
            "user",
            "created_at",
            "last_used_at",
            "expires_at",
            "revoked_at",
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return () if obj is None else self.readonly_fields

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoke instead: the row stays as a record of the key

    @admin.display(description="key")
    def masked_prefix(self, obj: ApiKey) -> str:
        return f"pfk_{obj.prefix}_…"

    @admin.display(description="state")
    def state(self, obj: ApiKey) -> str:
        if obj.revoked_at:
            return format_html('<span class="pf-badge pf-badge-muted">{}</span>', "revoked")
        if not obj.is_active:
            return format_html('<span class="pf-badge pf-badge-muted">{}</span>', "expired")
        return format_html('<span class="pf-badge pf-badge-ok">{}</span>', "active")

    @admin.action(description="Revoke selected API keys")
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = 0
        for key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(key=key)
            count += 1
        self.message_user(request, f"Revoked {counted(count, 'key', 'keys')}.", messages.SUCCESS)

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            obj.save(update_fields=["name"])
            return
        key, raw = api_key_create(
            user=request.user, name=obj.name, scope=obj.scope, expires_at=obj.expires_at
        )
        obj.pk, obj.prefix = key.pk, key.prefix
        request._new_api_key = raw  # shown once in the response below, never stored

    def response_add(
        self, request: HttpRequest, obj: ApiKey, post_url_continue: Any = None
    ) -> HttpResponse:
        raw = getattr(request, "_new_api_key", None)
        if raw is None:
            return super().response_add(request, obj, post_url_continue)
        context = {
            **self.admin_site.each_context(request),
            "key": obj,
            "raw_key": raw,
            "opts": self.model._meta,
            "title": "Your new API key",
        }
        response = TemplateResponse(request, "admin/finance/apikey/created.html", context)
        response["Cache-Control"] = "no-store"
        return response

    def response_change(self, request: HttpRequest, obj: ApiKey) -> HttpResponse:
        if "_revoke" in request.POST:
            api_key_revoke(key=obj)
            self.message_user(request, f"Revoked {obj.name}.", messages.SUCCESS)
            from django.shortcuts import redirect

            return redirect("admin:finance_apikey_changelist")
        return super().response_change(request, obj)
