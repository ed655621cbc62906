"""Categories, merchants and tags: list, get, create, update (PATCH; PUT behaves the same),
delete. Each request body carries its root key (`{"category": {...}}`)."""

from __future__ import annotations

from finance.api.resources import ResourceViewSet
from finance.models import Category, Merchant, Tag
from finance.selectors.ledger import CategoryFilters, category_list, merchant_list, tag_list
from finance.serializers.ledger import (
    CategoryCreateRequestSerializer,
    CategorySerializer,
    CategoryUpdateRequestSerializer,
    MerchantCreateRequestSerializer,
    MerchantSerializer,
    MerchantUpdateRequestSerializer,
    TagCreateRequestSerializer,
    TagSerializer,
    TagUpdateRequestSerializer,
)
from finance.services import catalog

NAMES = "Names are unique in the household, compared without regard to case."


class CategoryViewSet(ResourceViewSet):
    model = Category
    root_key, results_key = "category", "categories"
    serializer_class = CategorySerializer
    create_request = CategoryCreateRequestSerializer
    update_request = CategoryUpdateRequestSerializer
    filters = CategoryFilters
    selector = category_list
    create_service = catalog.category_create
    update_service = catalog.category_update
    delete_service = catalog.category_delete
    notes = {
        "list": "`parent_id` lists the subcategories of one category, `roots_only=true` the "
        "top-level ones.",
        "create": NAMES + " `color` is `#RRGGBB` (default `#6172F3`). `parent_id` makes it a "
        "subcategory of a top-level category: categories nest two levels at most.",
        "partial_update": NAMES + " A category with subcategories cannot get a parent.",
        "destroy": "Its transactions stay, without a category; its subcategories become "
        "top-level categories.",
    }


class MerchantViewSet(ResourceViewSet):
    model = Merchant
    root_key, results_key = "merchant", "merchants"
    serializer_class = MerchantSerializer
    create_request = MerchantCreateRequestSerializer
    update_request = MerchantUpdateRequestSerializer
    selector = merchant_list
    create_service = catalog.merchant_create
    update_service = catalog.merchant_update
    delete_service = catalog.merchant_delete
    notes = {
        "create": NAMES,
        "partial_update": NAMES,
        "destroy": "Its transactions stay, without a merchant.",
    }


class TagViewSet(ResourceViewSet):
    model = Tag
    root_key, results_key = "tag", "tags"
    serializer_class = TagSerializer
    create_request = TagCreateRequestSerializer
    update_request = TagUpdateRequestSerializer
    selector = tag_list
    create_service = catalog.tag_create
    update_service = catalog.tag_update
    delete_service = catalog.tag_delete
    notes = {
        "create": NAMES + " `color` is `#RRGGBB` (default `#6172F3`).",
        "partial_update": NAMES,
        "destroy": "It is taken off its transactions, which stay.",
    }
