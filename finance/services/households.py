"""Household users log in to the admin, which is scoped to their household."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission

from finance.models import User

HOUSEHOLD_GROUP = "Household members"
# Apps whose models a household member manages in the admin (scoped to their household).
HOUSEHOLD_APPS = ("finance", "trades", "imports", "providers", "exports")
_EXCLUDED_MODELS = {"family", "user"}


def household_group() -> Group:
    group, _ = Group.objects.get_or_create(name=HOUSEHOLD_GROUP)
    wanted = Permission.objects.filter(content_type__app_label__in=HOUSEHOLD_APPS).exclude(
        content_type__model__in=_EXCLUDED_MODELS
    )
    if group.permissions.count() != wanted.count():
        group.permissions.set(wanted)
    return group


def household_permissions_grant(*, user: User) -> None:
    user.groups.add(household_group())
