"""One declarative CRUD base for the API's household resources, as NetBox's model viewsets.

A resource's viewset declares what it is made of, and the base answers list, retrieve,
create, update (PATCH; PUT behaves the same) and delete, and documents each operation in the
OpenAPI description from the same declarations (`finance.api.schema.AutoSchema` reads
`declared_operation`):

    class TagViewSet(ResourceViewSet):
        model = Tag
        root_key, results_key = "tag", "tags"      # request body key, list body key
        serializer_class = TagSerializer           # the output shape
        create_request = TagCreateRequestSerializer
        update_request = TagUpdateRequestSerializer
        selector = tag_list                        # the list (filters: a dataclass)
        create_service = catalog.tag_create        # (family=..., **fields) -> record
        update_service = catalog.tag_update        # (tag=record, **fields)
        delete_service = catalog.tag_delete        # (tag=record)

Mixins give the operations one by one (`ListMixin`, `RetrieveMixin`, `CreateMixin`,
`PartialUpdateMixin` (PATCH), `UpdateMixin` (PATCH and PUT), `DestroyMixin`): a viewset
offers only the operations it inherits, so the router routes nothing else. Services and
selectors are plain functions of typed keyword arguments; the base validates the body with
the request serializer, takes the fields under `root_key` (the whole body when there is
none) and passes them as keyword arguments."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar

from django.db.models import Model, QuerySet
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from core.filters import QueryFilters
from finance.api.resource_docs import resource_operation
from finance.api.viewsets import FamilyViewSet
from finance.serializers.common import deleted_response

_FUNCTIONS = ("selector", "base_queryset", "create_service", "update_service", "delete_service")


class ResourceBase(FamilyViewSet):
    """The declarations every operation reads. A subclass sets the ones its operations use."""

    model: ClassVar[type[Model]]
    # The request body's key ("transaction") and the singular noun of the documentation; None
    # when the body holds the fields themselves (then `noun` names the resource).
    root_key: ClassVar[str | None] = None
    noun: ClassVar[str] = ""
    results_key: str = "results"  # the list body's key ("transactions")
    plural: ClassVar[str] = ""  # the plural noun of the documentation (default: results_key)
    create_request: ClassVar[type[serializers.Serializer] | None] = None
    update_request: ClassVar[type[serializers.Serializer] | None] = None
    create_response: ClassVar[type[serializers.Serializer] | None] = None  # default: the output
    filters: ClassVar[type | None] = None  # the list's filter dataclass (core.filters)
    # Plain functions (no `staticmethod` needed): the list; the household's records for
    # get and for reading a record again after a write (default: `model` by `family`).
    selector: ClassVar[Callable[..., QuerySet] | None] = None
    base_queryset: ClassVar[Callable[..., QuerySet] | None] = None
    create_service: ClassVar[Callable[..., Any] | None] = None
    update_service: ClassVar[Callable[..., Any] | None] = None
    delete_service: ClassVar[Callable[..., Any] | None] = None
    instance_arg: ClassVar[str | None] = None  # the services' keyword for the record
    idempotent_create: ClassVar[bool] = False  # create answers (record, created): 201 or 200
    reload_after_write: ClassVar[bool] = False  # answer the record as `base_queryset` reads it
    label: ClassVar[str] = ""  # "<label> deleted"
    list_order: ClassVar[str] = "newest first"
    # Client-facing text added to an operation's generated description, and its examples.
    notes: ClassVar[dict[str, str]] = {}
    examples: ClassVar[dict[str, list[Any]]] = {}
    destroy_parameters: ClassVar[list[Any]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _FUNCTIONS:  # a function set on the class is not a method of the view
            value = cls.__dict__.get(name)
            if inspect.isfunction(value):
                setattr(cls, name, staticmethod(value))
        if cls.root_key and not cls.__dict__.get("noun"):
            cls.noun = cls.root_key.replace("_", " ")
        if cls.noun and not cls.__dict__.get("label"):
            cls.label = cls.noun.capitalize()
        if isinstance(cls.__dict__.get("results_key"), str) and not cls.__dict__.get("plural"):
            cls.plural = cls.results_key.replace("_", " ")

    @classmethod
    def declared_operation(cls, action: str) -> dict[str, Any]:
        """The OpenAPI description of one of the base's operations (finance/api/schema.py)."""
        return resource_operation(cls, action)

    # --- reads ------------------------------------------------------------------------------
    def get_queryset(self) -> QuerySet:
        if self.base_queryset is not None:
            return self.base_queryset(family=self.family)
        return self.model.objects.filter(family=self.family)

    def read_filters(self, request: Request) -> Any:
        return QueryFilters(request.query_params).parse(self.filters) if self.filters else None

    # --- writes -----------------------------------------------------------------------------
    def request_fields(self, request_serializer: Any, request: Request) -> dict[str, Any]:
        body = request_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        return dict(data[self.root_key] if self.root_key else data)

    def record_arg(self, record: Model) -> dict[str, Model]:
        return {self.instance_arg or self.root_key or "instance": record}

    def reloads(self, record: Model) -> bool:
        """Whether a written record is answered as `base_queryset` reads it again."""
        return self.reload_after_write

    def answer(self, result: Any, code: int = 200, serializer: Any = None) -> Response:
        """The record (or what the service answered) in the output shape."""
        if isinstance(result, self.model) and self.reloads(result):
            result = self.get_queryset().get(pk=result.pk)
        klass = serializer or self.get_serializer_class()
        return Response(klass(result).data, status=code)


class ListMixin(ResourceBase):
    def list(self, request: Request) -> Response:
        filters = self.read_filters(request)
        if self.selector is None:
            return self.paginated(self.get_queryset())
        kwargs = {"filters": filters} if filters is not None else {}
        return self.paginated(self.selector(family=self.family, **kwargs))


class RetrieveMixin(ResourceBase):
    def retrieve(self, request: Request, pk: str) -> Response:
        return self.answer(self.get_object())


class CreateMixin(ResourceBase):
    def create(self, request: Request) -> Response:
        fields = self.request_fields(self.create_request, request)
        result = self.create_service(family=self.family, **fields)
        created = True
        if self.idempotent_create:
            result, created = result
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return self.answer(result, code, self.create_response)


class PartialUpdateMixin(ResourceBase):
    def partial_update(self, request: Request, pk: str) -> Response:
        record = self.get_object()
        fields = self.request_fields(self.update_request, request)
        result = self.update_service(**self.record_arg(record), **fields)
        return self.answer(result if isinstance(result, self.model) else record)


class UpdateMixin(PartialUpdateMixin):
    def update(self, request: Request, pk: str) -> Response:
        """PUT behaves as PATCH: only the fields sent change (docs/decisions.md, API)."""
        return self.partial_update(request, pk)


class DestroyMixin(ResourceBase):
    def destroy(self, request: Request, pk: str) -> Response:
        record = self.get_object()
        self.delete_service(**self.record_arg(record), **self.destroy_options(request))
        return deleted_response(self.label)

    def destroy_options(self, request: Request) -> dict[str, Any]:
        """Extra keyword arguments of the delete service, read from the query string."""
        return {}


class ReadOnlyResourceViewSet(ListMixin, RetrieveMixin):
    """List and get."""


class ResourceViewSet(ListMixin, RetrieveMixin, CreateMixin, UpdateMixin, DestroyMixin):
    """List, get, create, update and delete."""
