"""Admin pages for securities, trades and holdings, scoped to the household.

Securities are special: shared reference securities (no family) are visible to every
household but only superusers change them; a household's manual securities are its own."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from core.errors import ApplicationError
from finance.admin_base import (
    HouseholdAdmin,
    HouseholdRelatedFilter,
    is_staff_operator,
    user_family,
)
from finance.models import Account
from finance.templatetags.finance_admin import money_text, quantity
from trades.models import Holding, Security, SecurityPrice, Trade
from trades.services.changes import trade_delete, trade_store


def visible_securities(qs: QuerySet[Security], request: HttpRequest) -> QuerySet[Security]:
    if is_staff_operator(request):
        return qs
    family = user_family(request)
    if family is None:
        return qs.none()
    return qs.filter(Q(family__isnull=True) | Q(family=family))


class SecurityScopedFKMixin:
    """FK choices for `security` are shared securities plus the household's manual ones."""

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]
        if db_field.name == "security" and field is not None:
            field.queryset = visible_securities(Security.objects.all(), request)
        if db_field.name == "account" and field is not None:
            field.queryset = field.queryset.filter(account_type__in=Account.TRADING_TYPES)
        return field


@admin.register(Security)
class SecurityAdmin(HouseholdAdmin):
    list_display = ("ticker", "exchange_mic", "name", "currency", "manual", "shared")
    list_filter = ("manual",)
    search_fields = ("ticker", "name")

    @admin.display(boolean=True)
    def shared(self, obj: Security) -> bool:
        return obj.family_id is None

    def get_queryset(self, request: HttpRequest) -> QuerySet[Security]:
        return visible_securities(admin.ModelAdmin.get_queryset(self, request), request)

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str) -> Any:
        queryset, dupes = admin.ModelAdmin.get_search_results(self, request, queryset, search_term)
        return visible_securities(queryset, request), dupes

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> Any:
        exclude = list(super().get_exclude(request, obj) or [])
        if not is_staff_operator(request):
            exclude.append("manual")
        return exclude

    def _may_edit(self, request: HttpRequest, obj: Security | None) -> bool:
        return obj is None or obj.family_id is not None or is_staff_operator(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_change_permission(request, obj) and self._may_edit(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_delete_permission(request, obj) and self._may_edit(request, obj)

    def save_model(self, request: HttpRequest, obj: Security, form: Any, change: bool) -> None:
        if not is_staff_operator(request):
            obj.family = user_family(request)  # a household creates only its own securities
            obj.manual = True
        super().save_model(request, obj, form, change)


class PricedColumns:
    """The quantity and price columns trades, holdings and price points share (formatted as
    the rest of the admin formats them, the price with the row's currency)."""

    @admin.display(description="quantity", ordering="qty")
    def quantity(self, obj: Trade | Holding) -> str:
        return quantity(obj.qty)

    @admin.display(description="price", ordering="price")
    def price_text(self, obj: Trade | Holding | SecurityPrice) -> str:
        return money_text(obj.price, obj.currency)


@admin.register(Trade)
class TradeAdmin(SecurityScopedFKMixin, PricedColumns, HouseholdAdmin):
    list_display = ("date", "name", "account", "security", "quantity", "price_text", "amount_text")
    list_filter = (("account", HouseholdRelatedFilter), "kind", "date")
    search_fields = ("name", "security__ticker", "notes")
    date_hierarchy = "date"
    list_select_related = ("account", "security")
    readonly_fields = ("created_at", "updated_at")
    autocomplete_fields = ("security",)

    def save_model(self, request: HttpRequest, obj: Trade, form: Any, change: bool) -> None:
        if not change and not obj.family_id:
            obj.family = user_family(request) or obj.account.family
        try:
            trade_store(trade=obj)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    @admin.display(description="amount", ordering="amount")
    def amount_text(self, obj: Trade) -> str:
        return money_text(obj.amount, obj.currency)

    def delete_model(self, request: HttpRequest, obj: Trade) -> None:
        trade_delete(trade=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Trade]) -> None:
        for trade in list(queryset.select_related("account", "family")):
            trade_delete(trade=trade)


@admin.register(Holding)
class HoldingAdmin(PricedColumns, HouseholdAdmin):
    """Holdings are derived (from trades or a provider): read-only here."""

    list_display = ("account", "security", "quantity", "price_text", "value_text", "source")
    list_filter = (("account", HouseholdRelatedFilter), "source")
    search_fields = ("security__ticker", "security__name")
    list_select_related = ("account", "security")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="value", ordering="market_value")
    def value_text(self, obj: Holding) -> str:
        return money_text(obj.market_value, obj.currency)


@admin.register(SecurityPrice)
class SecurityPriceAdmin(PricedColumns, HouseholdAdmin):
    """The household's price points: read here; written by trades, syncs and the API
    (`POST /api/v1/security_prices`), each of which revalues the accounts they price."""

    list_display = ("date", "security", "price_text", "source")
    list_filter = ("source", "currency")
    search_fields = ("security__ticker", "security__name")
    date_hierarchy = "date"
    list_select_related = ("security",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
