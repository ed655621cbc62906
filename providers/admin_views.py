"""The connection screens' own views: add a connection with its credential, link discovered
accounts, reconnect, sync now. Each calls the same service the API does."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from finance.admin_base import is_staff_operator, scope_queryset, user_family
from finance.api.errors import ValidationFailed
from finance.labels import connection_health, counted
from finance.models import Account, Family
from providers.models import ProviderConnection, Sync
from providers.services import connection_create, provider_account_update, sync_request
from providers.simplefin.setup import connection_reconnect

LINK_NEW, LINK_SKIP = "new", "skip"
HISTORY = 20


class ConnectionAddForm(forms.Form):
    provider = forms.ChoiceField(choices=ProviderConnection.Provider.choices)
    api_key = forms.CharField(
        required=False,
        label="Lunch Flow API key",
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
    )
    setup_token = forms.CharField(
        required=False,
        label="SimpleFIN setup token",
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
    )
    name = forms.CharField(required=False, max_length=255, label="Name (optional)")
    family = forms.ModelChoiceField(
        queryset=Family.objects.order_by("name"), required=False, label="Household"
    )

    def __init__(self, *args: Any, staff: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not staff:
            del self.fields["family"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        field = "api_key" if data.get("provider") == "lunchflow" else "setup_token"
        if not (data.get(field) or "").strip():
            self.add_error(field, "Required for this provider.")
        if "family" in self.fields and data.get("family") is None:
            self.add_error("family", "Choose the household this connection belongs to.")
        return data


class ReconnectForm(forms.Form):
    credential = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "off"}))


def _credential_field(provider: str) -> str:
    return "api_key" if provider == "lunchflow" else "setup_token"


def _render(request: HttpRequest, admin: Any, template: str, **context: Any) -> HttpResponse:
    base = {**admin.admin_site.each_context(request), "opts": admin.model._meta}
    return TemplateResponse(request, template, {**base, **context})


def connection_add(admin: Any, request: HttpRequest) -> HttpResponse:
    staff = is_staff_operator(request) and user_family(request) is None
    form = ConnectionAddForm(request.POST or None, staff=staff)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        family = data.get("family") or user_family(request)
        field = _credential_field(data["provider"])
        try:
            connection, _ = connection_create(
                family=family, provider=data["provider"], **{field: data[field].strip()}
            )
        except ValidationFailed as exc:
            form.add_error(None, exc.message)
        else:
            if data.get("name"):
                connection.name = data["name"]
                connection.save(update_fields=["name", "updated_at"])
            found = connection.accounts.count()
            messages.success(
                request,
                f"Connected: {counted(found, 'account', 'accounts')} found. Link them below.",
            )
            return HttpResponseRedirect(_change_url(connection))
    return _render(
        request,
        admin,
        "admin/providers/providerconnection/add.html",
        form=form,
        title="Add a bank connection",
    )


def connection_reconnect_view(admin: Any, request: HttpRequest, object_id: Any) -> HttpResponse:
    connection = _connection(request, object_id)
    form = ReconnectForm(request.POST or None)
    field = _credential_field(connection.provider)
    form.fields["credential"].label = (
        "New Lunch Flow API key" if field == "api_key" else "New SimpleFIN setup token"
    )
    if request.method == "POST" and form.is_valid():
        try:
            connection_reconnect(
                connection=connection, **{field: form.cleaned_data["credential"].strip()}
            )
        except ValidationFailed as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, "Reconnected: every account link was kept.")
            return HttpResponseRedirect(_change_url(connection))
    return _render(
        request,
        admin,
        "admin/providers/providerconnection/reconnect.html",
        form=form,
        original=connection,
        title=f"Reconnect {connection}",
    )


def connection_link(admin: Any, request: HttpRequest, object_id: Any) -> HttpResponse:
    """Save every discovered account's choice: a new ledger account, an existing one, or skip."""
    connection = _connection(request, object_id)
    choices = {}
    for pa in connection.accounts.all():
        value = request.POST.get(f"link-{pa.pk}")
        if value == LINK_NEW:
            choices[pa] = {"account_id": None, "skipped": False}
        elif value == LINK_SKIP:
            choices[pa] = {"skipped": True}
        elif value:
            choices[pa] = {"account_id": value, "skipped": False}
    try:
        with transaction.atomic():
            for pa, data in choices.items():
                if data.get("account_id") and not _is_household_account(connection, data):
                    raise ValidationFailed(["account_id: does not exist in this household"])
                provider_account_update(provider_account=pa, **data)
    except ValidationFailed as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request, f"{counted(len(choices), 'account link', 'account links')} saved."
        )
    return HttpResponseRedirect(_change_url(connection))


def connection_sync(admin: Any, request: HttpRequest, object_id: Any) -> HttpResponse:
    connection = _connection(request, object_id)
    sync, created = sync_request(connection=connection)
    note = "started" if created else f"already {sync.status}"
    messages.success(request, f"Sync {note}.")
    return HttpResponseRedirect(_change_url(connection))


def connection_page_context(connection: ProviderConnection, request: HttpRequest) -> dict:
    accounts = scope_queryset(Account.objects.order_by("name"), request)
    if is_staff_operator(request):
        accounts = accounts.filter(family_id=connection.family_id)
    links = list(connection.accounts.select_related("account").order_by("name"))
    syncs = list(
        Sync.objects.filter(connection=connection)
        .select_related("provider_account")
        .order_by("-created_at")[:HISTORY]
    )
    health, health_text = connection_health(connection, syncs[0] if syncs else None)
    return {
        "links": links,
        "health": health,
        "health_text": health_text,
        "ledger_accounts": list(accounts),
        "syncs": syncs,
        "LINK_NEW": LINK_NEW,
        "LINK_SKIP": LINK_SKIP,
    }


def _is_household_account(connection: ProviderConnection, data: dict) -> bool:
    try:
        return Account.objects.filter(
            family_id=connection.family_id, pk=data["account_id"]
        ).exists()
    except (ValueError, DjangoValidationError):  # a malformed id is not the household's
        return False


def _connection(request: HttpRequest, object_id: Any) -> ProviderConnection:
    connection = (
        scope_queryset(ProviderConnection.objects.all(), request).filter(pk=object_id).first()
    )
    if connection is None:
        raise Http404
    return connection


def _change_url(connection: ProviderConnection) -> str:
    return reverse("admin:providers_providerconnection_change", args=[connection.pk])
