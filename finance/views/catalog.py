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
