"""Writes to categories, merchants and tags: unique names per household, `#RRGGBB` colors,
categories two levels deep. Deleting one detaches it from transactions (no transaction lost)."""

from __future__ import annotations

import uuid
from typing import Any, TypedDict, TypeVar, Unpack

from django.db import IntegrityError, models, transaction

from core.errors import ValidationFailed
from finance.ledger import ledger_batch
from finance.models import Category, Family, Merchant, Tag

NAME_TAKEN = "is already used by another {what} of this household"
NOT_IN_HOUSEHOLD = "does not exist in this household"
TOO_DEEP = "categories nest two levels at most"
PARENT_IS_SELF = "a category cannot be its own parent"

M = TypeVar("M", bound=models.Model)


class CategoryFields(TypedDict, total=False):
    name: str
    color: str  # #RRGGBB
    icon: str
    parent_id: uuid.UUID | None  # a root category of the household, or None: a root


class MerchantFields(TypedDict, total=False):
    name: str


class TagFields(TypedDict, total=False):
    name: str
    color: str  # #RRGGBB


def _name_taken(model: type[models.Model], family: Family, name: str, exclude_pk: Any) -> bool:
    return model.objects.filter(family=family, name__iexact=name).exclude(pk=exclude_pk).exists()


def _save(obj: M, what: str) -> M:
    """Save; the unique constraint decides between racing requests (a 422, never a 500)."""
    if _name_taken(type(obj), obj.family, obj.name, obj.pk if not obj._state.adding else None):
        raise ValidationFailed([f"name: {NAME_TAKEN.format(what=what)}"])
    try:
        with transaction.atomic():
            obj.save()
    except IntegrityError:
        raise ValidationFailed([f"name: {NAME_TAKEN.format(what=what)}"]) from None
    return obj


def _apply(
    obj: models.Model, data: CategoryFields | MerchantFields | TagFields, fields: tuple[str, ...]
) -> None:
    for field in fields:
        if field in data and data[field] is not None:
            setattr(obj, field, data[field])


def _category_parent(category: Category, data: CategoryFields) -> None:
    if "parent_id" not in data:
        return
    parent_id = data["parent_id"]
    if parent_id is None:
        category.parent = None
        return
    parent = Category.objects.filter(family=category.family, pk=parent_id).first()
    if parent is None:
        raise ValidationFailed([f"parent_id: {NOT_IN_HOUSEHOLD}"])
    if parent.pk == category.pk:
        raise ValidationFailed([f"parent_id: {PARENT_IS_SELF}"])
    if parent.parent_id is not None:
        raise ValidationFailed([f"parent_id: {TOO_DEEP}"])
    if not category._state.adding and category.subcategories.exists():
        raise ValidationFailed([f"parent_id: {TOO_DEEP} (this category has subcategories)"])
    category.parent = parent


def category_create(*, family: Family, **data: Unpack[CategoryFields]) -> Category:
    category = Category(family=family)
    _apply(category, data, ("name", "color", "icon"))
    _category_parent(category, data)
    return _save(category, "category")


def category_update(*, category: Category, **data: Unpack[CategoryFields]) -> Category:
    _apply(category, data, ("name", "color", "icon"))
    _category_parent(category, data)
    return _save(category, "category")


def category_delete(*, category: Category) -> None:
    """Its transactions keep their rows without a category; its subcategories become roots."""
    with ledger_batch(family=category.family) as batch:
        batch.delete_record(category)


def merchant_create(*, family: Family, **data: Unpack[MerchantFields]) -> Merchant:
    merchant = Merchant(family=family)
    _apply(merchant, data, ("name",))
    return _save(merchant, "merchant")


def merchant_update(*, merchant: Merchant, **data: Unpack[MerchantFields]) -> Merchant:
    _apply(merchant, data, ("name",))
    return _save(merchant, "merchant")


def merchant_delete(*, merchant: Merchant) -> None:
    with ledger_batch(family=merchant.family) as batch:
        batch.delete_record(merchant)


def tag_create(*, family: Family, **data: Unpack[TagFields]) -> Tag:
    tag = Tag(family=family)
    _apply(tag, data, ("name", "color"))
    return _save(tag, "tag")


def tag_update(*, tag: Tag, **data: Unpack[TagFields]) -> Tag:
    _apply(tag, data, ("name", "color"))
    return _save(tag, "tag")


def tag_delete(*, tag: Tag) -> None:
    with ledger_batch(family=tag.family) as batch:
        batch.delete_record(tag)
