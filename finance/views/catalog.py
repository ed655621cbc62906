"""Categories, merchants and tags: list, get, create, update (PATCH; PUT behaves the same),
delete. Each request body carries its root key (`{"category": {...}}`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from finance.api.viewsets import FamilyViewSet
from finance.models import Category, Merchant, Tag
from finance.selectors.ledger import category_list, merchant_list, tag_list
from finance.serializers.common import DeletedSerializer, deleted_response
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


class CatalogViewSet(FamilyViewSet):
    """A household-owned named record. Subclasses name their model, services and shapes."""

    model: ClassVar[Any]
    root_key: ClassVar[str]
    label: ClassVar[str]
    create_request: ClassVar[Any]
    update_request: ClassVar[Any]
    selector: ClassVar[Callable[..., QuerySet]]
    create_service: ClassVar[Callable[..., Any]]
    update_service: ClassVar[Callable[..., Any]]
    delete_service: ClassVar[Callable[..., Any]]

    def get_queryset(self) -> QuerySet:
        return self.model.objects.filter(family=self.family)

    def _out(self, obj: Any, code: int = 200) -> Response:
        return Response(self.get_serializer_class()(obj).data, status=code)

    def list(self, request: Request) -> Response:
        return self.paginated(type(self).selector(family=self.family, params=request.query_params))

    def retrieve(self, request: Request, pk: str) -> Response:
        return self._out(self.get_object())

    def create(self, request: Request) -> Response:
        body = self.create_request(data=request.data)
        body.is_valid(raise_exception=True)
        obj = type(self).create_service(family=self.family, **body.validated_data[self.root_key])
        return self._out(obj, status.HTTP_201_CREATED)

    def partial_update(self, request: Request, pk: str) -> Response:
        obj = self.get_object()
        body = self.update_request(data=request.data)
        body.is_valid(raise_exception=True)
        type(self).update_service(obj, body.validated_data[self.root_key])
        return self._out(obj)

    def update(self, request: Request, pk: str) -> Response:
        return self.partial_update(request, pk)

    def destroy(self, request: Request, pk: str) -> Response:
        type(self).delete_service(self.get_object())
        return deleted_response(self.label)


def _schema(serializer: Any, create: Any, update: Any, params: list[Any]) -> dict[str, Any]:
    return {
        "list": extend_schema(parameters=params, responses=serializer(many=True)),
        "retrieve": extend_schema(responses=serializer),
        "create": extend_schema(request=create, responses={201: serializer}),
        "partial_update": extend_schema(request=update, responses=serializer),
        "update": extend_schema(request=update, responses=serializer),
        "destroy": extend_schema(responses={200: DeletedSerializer}),
    }


@extend_schema_view(
    **_schema(
        CategorySerializer,
        CategoryCreateRequestSerializer,
        CategoryUpdateRequestSerializer,
        [
            OpenApiParameter("parent_id", str, description="uuid: subcategories of this one"),
            OpenApiParameter("roots_only", bool, description="only top-level categories"),
        ],
    )
)
class CategoryViewSet(CatalogViewSet):
    model = Category
    root_key = "category"
    label = "Category"
    results_key = "categories"
    serializer_class = CategorySerializer
    create_request = CategoryCreateRequestSerializer
    update_request = CategoryUpdateRequestSerializer
    selector = staticmethod(category_list)
    create_service = staticmethod(catalog.category_create)
    update_service = staticmethod(lambda obj, data: catalog.category_update(category=obj, **data))
    delete_service = staticmethod(lambda obj: catalog.category_delete(category=obj))


@extend_schema_view(
    **_schema(
        MerchantSerializer, MerchantCreateRequestSerializer, MerchantUpdateRequestSerializer, []
    )
)
class MerchantViewSet(CatalogViewSet):
    model = Merchant
    root_key = "merchant"
    label = "Merchant"
    results_key = "merchants"
    serializer_class = MerchantSerializer
    create_request = MerchantCreateRequestSerializer
    update_request = MerchantUpdateRequestSerializer
    selector = staticmethod(merchant_list)
    create_service = staticmethod(catalog.merchant_create)
    update_service = staticmethod(lambda obj, data: catalog.merchant_update(merchant=obj, **data))
    delete_service = staticmethod(lambda obj: catalog.merchant_delete(merchant=obj))


@extend_schema_view(
    **_schema(TagSerializer, TagCreateRequestSerializer, TagUpdateRequestSerializer, [])
)
class TagViewSet(CatalogViewSet):
    model = Tag
    root_key = "tag"
    label = "Tag"
    results_key = "tags"
    serializer_class = TagSerializer
    create_request = TagCreateRequestSerializer
    update_request = TagUpdateRequestSerializer
    selector = staticmethod(tag_list)
    create_service = staticmethod(catalog.tag_create)
    update_service = staticmethod(lambda obj, data: catalog.tag_update(tag=obj, **data))
    delete_service = staticmethod(lambda obj: catalog.tag_delete(tag=obj))
