"""The admin is the household's interface: every ModelAdmin derives from HouseholdAdmin, which
scopes lists, change and delete pages, foreign-key choices, filters and autocomplete to the
logged-in user's household. Superusers see every household."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from core.exact import ExactDecimalField, ExactOrder
from finance.models import Family


def user_family(request: HttpRequest) -> Family | None:
    return getattr(request.user, "family", None)


def is_staff_operator(request: HttpRequest) -> bool:
    return bool(request.user.is_superuser)


def scope_queryset(qs: QuerySet, request: HttpRequest, family_path: str | None = None) -> QuerySet:
    """Filter any queryset to the user's household, given the lookup path to its Family."""
    if is_staff_operator(request):
        return qs
    path = family_path or _family_path(qs.model)
    if path is None:
        return qs.none()
    family = user_family(request)
    if family is None:
        return qs.none()
    return qs.filter(**{path: family})


def _family_path(model: type[models.Model]) -> str | None:
    declared = getattr(model, "family_path", None)
    if declared:
        return declared
    if model is Family:
        return "pk"
    names = {f.name for f in model._meta.get_fields()}
    if "family" in names:
        return "family"
    if "account" in names:
        return "account__family"
    return None


def _numeric_order(model: type[models.Model], order: Any) -> Any:
    """A sort by a decimal column in numeric order: on SQLite the column holds text
    (core/exact.py), and "10" sorts before "9" as text."""
    if not isinstance(order, str):
        return order
    try:
        field = model._meta.get_field(order.lstrip("-"))
    except FieldDoesNotExist:
        return order
    if not isinstance(field, ExactDecimalField):
        return order
    key = ExactOrder(field.name)
    return key.desc() if order.startswith("-") else key.asc()


class NumericOrderChangeList(ChangeList):
    def get_ordering(self, request: HttpRequest, queryset: QuerySet) -> list[Any]:
        ordering = super().get_ordering(request, queryset)
        return [_numeric_order(queryset.model, order) for order in ordering]


class HouseholdAdmin(admin.ModelAdmin):
    """Set `family_path` when the model reaches its household by another path than `family`."""

    family_path: str | None = None
    list_per_page = 50

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return NumericOrderChangeList

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return scope_queryset(super().get_queryset(request), request, self.family_path)

    def get_list_display(self, request: HttpRequest) -> Any:
        columns = list(super().get_list_display(request))
        if is_staff_operator(request) and self._has_family_field() and "family" not in columns:
            columns.append("family")  # staff see every household: say whose each row is
        return columns

    def get_list_select_related(self, request: HttpRequest) -> Any:
        related = super().get_list_select_related(request)
        # An admin naming its joins would otherwise read the staff's household column a row.
        if isinstance(related, list | tuple) and "family" in self.get_list_display(request):
            return tuple(dict.fromkeys((*related, "family")))
        return related

    def get_list_filter(self, request: HttpRequest) -> Any:
        filters = list(super().get_list_filter(request))
        path = self.family_path or _family_path(self.model)
        if is_staff_operator(request) and path and self.model is not Family:
            household = type("HouseholdFilter", (HouseholdFilter,), {"family_path": path})
            filters.insert(0, household)
        return filters

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and hasattr(field, "queryset"):
            if db_field.related_model is Family:
                if not is_staff_operator(request):
                    field.queryset = Family.objects.filter(
                        pk=getattr(user_family(request), "pk", None)
                    )
            else:
                field.queryset = scope_queryset(field.queryset, request)
        return field

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_manytomany(db_field, request, **kwargs)
        if field is not None and hasattr(field, "queryset"):
            field.queryset = scope_queryset(field.queryset, request)
        return field

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str) -> Any:
        # Autocomplete of related models comes through here too: scope it.
        queryset, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        return scope_queryset(queryset, request, self.family_path), may_have_duplicates

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> Any:
        exclude = list(super().get_exclude(request, obj) or [])
        if not is_staff_operator(request) and self._has_family_field():
            exclude.append("family")
        return exclude

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change and self._has_family_field() and not getattr(obj, "family_id", None):
            obj.family = user_family(request)
        super().save_model(request, obj, form, change)

    def _has_family_field(self) -> bool:
        return any(f.name == "family" for f in self.model._meta.get_fields())


class HouseholdRelatedFilter(admin.RelatedFieldListFilter):
    """A related-field filter whose choices are the household's own records."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> Any:
        qs = scope_queryset(field.related_model._default_manager.all(), request)
        return [(obj.pk, str(obj)) for obj in qs]


class HouseholdFilter(admin.SimpleListFilter):
    """Staff's filter by household; shows nothing to a household user (already scoped).

    Subclass with `family_path` when the model reaches its household by another path."""

    title = "household"
    parameter_name = "household"
    family_path = "family"

    def lookups(self, request: HttpRequest, model_admin: Any) -> Any:
        if not is_staff_operator(request):
            return []
        return [(str(f.pk), f.name) for f in Family.objects.order_by("name")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() and is_staff_operator(request):
            try:
                return queryset.filter(**{f"{self.family_path}__pk": self.value()})
            except (ValueError, ValidationError):
                return queryset.none()
        return queryset
