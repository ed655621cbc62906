"""The declarative CRUD base (finance/api/resources.py) and the declared list filters
(core.filters): what a resource declares is what it answers and what the document shows."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from decimal import Decimal

import pytest
from django.http import QueryDict
from django.urls import resolve

from core.errors import ValidationFailed
from core.filters import QueryFilters, query_param
from finance.api.resources import ResourceBase
from finance.api.schema import filter_parameters
from tests.conftest import assert_error
from tests.tenancy import api_routes


@dataclass(frozen=True)
class ThingFilters:
    account_id: uuid.UUID | None = query_param("uuid", description="uuid")
    tag_ids: tuple[uuid.UUID, ...] = query_param("uuid_list")
    start_date: dt.date | None = query_param("date")
    end_date: dt.date | None = query_param("date", not_before="start_date")
    min_amount: Decimal | None = query_param("decimal")
    kind: str | None = query_param("choice", name="type", choices=("income", "expense"))
    pending: bool | None = query_param("boolean")
    search: str | None = query_param("text", max_length=5)


def parse(query: str) -> ThingFilters:
    return QueryFilters(QueryDict(query)).parse(ThingFilters)


def test_filters_are_read_into_their_dataclass():
    a, b = uuid.uuid4(), uuid.uuid4()
    filters = parse(
        f"account_id={a}&tag_ids[]={a}&tag_ids={b},{a}&start_date=2024-01-01&end_date=2024-01-31"
        "&min_amount=-12.5&type=income&pending=false&search=cafe&unknown=1"
    )
    assert filters == ThingFilters(
        account_id=a,
        tag_ids=(a, b, a),
        start_date=dt.date(2024, 1, 1),
        end_date=dt.date(2024, 1, 31),
        min_amount=Decimal("-12.5"),
        kind="income",
        pending=False,
        search="cafe",
    )
    assert parse("") == ThingFilters()


def test_every_bad_filter_is_named_at_once():
    with pytest.raises(ValidationFailed) as caught:
        parse(
            "account_id=nope&start_date=2024-02-01&end_date=2024-01-01&type=both&pending=maybe"
            "&search=toolong"
        )
    assert caught.value.errors == [
        "account_id: 'nope' is not a valid id",
        "end_date: must not be before start_date",
        "type: must be one of income, expense",
        "pending: must be true or false",
        "search: must be at most 5 characters of text",
    ]


def test_the_document_shows_the_declared_filters():
    params = {p.name: p for p in filter_parameters(ThingFilters)}
    assert list(params) == [
        "account_id",
        "tag_ids[]",
        "start_date",
        "end_date",
        "min_amount",
        "type",
        "pending",
        "search",
    ]
    assert params["type"].enum == ["income", "expense"]
    assert params["pending"].type is bool
    assert params["account_id"].description == "uuid"


def _resource_views(user):
    """The detail route (`<plural>/<pk>`) of every resource built on the base."""
    for route in api_routes(user):
        view = resolve(route.url(uuid.uuid4())).func
        if route.pattern.count("/") == 3 and issubclass(view.cls, ResourceBase):
            yield route, view.cls


@pytest.mark.django_db
def test_a_resource_answers_only_the_operations_it_inherits(alice):
    routes = list(_resource_views(alice.user))
    assert len(routes) >= 10
    for route, view in routes:
        methods = set(route.methods)
        assert ("PUT" in methods) == hasattr(view, "update"), route.pattern
        assert ("PATCH" in methods) == hasattr(view, "partial_update"), route.pattern
        assert ("DELETE" in methods) == hasattr(view, "destroy"), route.pattern
    r = alice.client.put(f"/api/v1/provider_accounts/{uuid.uuid4()}", {}, format="json")
    assert_error(r, 405, "method_not_allowed")


@pytest.mark.django_db
def test_a_list_reads_its_filters_before_its_selector(alice, monkeypatch):
    """A bad filter is a 422 from the view: the selector never runs."""
    from finance.views.transactions import TransactionViewSet

    def selector(**kwargs):
        raise AssertionError("the selector ran")

    monkeypatch.setattr(TransactionViewSet, "selector", staticmethod(selector))
    r = alice.client.get("/api/v1/transactions?start_date=2024-13-01")
    body = assert_error(r, 422, "validation_failed")
    assert body["errors"] == ["start_date: is not a valid calendar date"]
