"""Building blocks of the generic tenant-isolation tests: a factory for every household record
kind, and the API routes discovered from the URL configuration."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import models
from django.test import RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.request import Request

from finance.models import (
    Account,
    ApiKey,
    Category,
    ExchangeRate,
    Family,
    Merchant,
    RejectedTransfer,
    Tag,
    Transaction,
    Transfer,
    User,
)
from tests import factories as f


def _transfer_pair(family: Family) -> tuple[Transaction, Transaction]:
    a, b = f.AccountFactory(family=family), f.AccountFactory(family=family)
    outflow = f.TransactionFactory(account=a, amount=100)
    inflow = f.TransactionFactory(account=b, amount=-100)
    return inflow, outflow


def _transfer(family: Family) -> Transfer:
    inflow, outflow = _transfer_pair(family)
    return Transfer.objects.create(
        family=family, inflow_transaction=inflow, outflow_transaction=outflow
    )


def _rejected(family: Family) -> RejectedTransfer:
    inflow, outflow = _transfer_pair(family)
    return RejectedTransfer.objects.create(
        family=family, inflow_transaction=inflow, outflow_transaction=outflow
    )


def _api_key(family: Family) -> ApiKey:
    from finance.services.api_keys import api_key_create

    user = f.UserFactory(family=family)
    return api_key_create(user=user, name="theirs")[0]


# One way to make a record of each kind for a household. Other apps add theirs below.
RECORD_FACTORIES: dict[type[models.Model], Callable[[Family], models.Model]] = {
    Account: lambda family: f.AccountFactory(family=family),
    Category: lambda family: f.CategoryFactory(family=family),
    Merchant: lambda family: f.MerchantFactory(family=family),
    Tag: lambda family: f.TagFactory(family=family),
    Transaction: lambda family: f.TransactionFactory(account=f.AccountFactory(family=family)),
    Transfer: _transfer,
    RejectedTransfer: _rejected,
    ApiKey: _api_key,
    # a household's own rate; system rates have no household
    ExchangeRate: lambda family: ExchangeRate.objects.create(
        family=family, date="2024-05-01", from_currency="EUR", to_currency="USD", rate="1.1"
    ),
}
NOT_HOUSEHOLD_RECORDS = {Family, User}


def _register_trades() -> None:
    from tests.trades.factories import (
        HoldingFactory,
        SecurityFactory,
        SecurityPriceFactory,
        TradeFactory,
    )
    from trades.models import Holding, Security, SecurityPrice, Trade

    # a household's manual security; shared reference securities have no household
    RECORD_FACTORIES[Security] = lambda family: SecurityFactory(family=family)
    RECORD_FACTORIES[Trade] = lambda family: TradeFactory(account__family=family)
    RECORD_FACTORIES[Holding] = lambda family: HoldingFactory(account__family=family)
    RECORD_FACTORIES[SecurityPrice] = lambda family: SecurityPriceFactory(family=family)


_register_trades()


def _register_imports() -> None:
    from imports.models import Import

    RECORD_FACTORIES[Import] = lambda family: Import.objects.create(
        family=family, stats={"rows_count": 0}
    )


_register_imports()


def make_record(model: type[models.Model], family: Family) -> models.Model:
    factory = RECORD_FACTORIES.get(model)
    if factory is None:
        raise AssertionError(
            f"No factory for {model.__name__}: add one to tests/tenancy.py RECORD_FACTORIES so "
            "tenant isolation covers it"
        )
    return factory(family)


@dataclass
class ApiRoute:
    pattern: str  # e.g. "api/v1/transactions/<pk>"
    methods: list[str]
    model: type[models.Model] | None
    root_key: str | None
    list_url: str = ""

    def url(self, pk: Any) -> str:
        return "/" + re.sub(r"<[^>]+>|\(\?P<[^>]+>[^)]*\)", str(pk), self.pattern)


def _walk(patterns: list[Any], prefix: str = "") -> list[tuple[str, URLPattern]]:
    out = []
    for p in patterns:
        if isinstance(p, URLResolver):
            out.extend(_walk(p.url_patterns, prefix + str(p.pattern)))
        elif isinstance(p, URLPattern):
            out.append((prefix + str(p.pattern), p))
    return out


def _clean(pattern: str) -> str:
    pattern = pattern.replace("^", "").replace("$", "").replace("\\", "")
    return re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", pattern)


def _model_of(view_cls: Any, action: str, user: Any, kwargs: dict[str, Any]) -> Any:
    declared = getattr(view_cls, "tenant_model", None)
    if declared is not None:
        return declared
    if not hasattr(view_cls, "get_queryset"):
        return None
    view = view_cls()
    django_request = RequestFactory().get("/")
    django_request.user = user
    view.request = Request(django_request)
    view.request.user = user
    view.kwargs, view.args, view.format_kwarg, view.action = kwargs, (), None, action
    try:
        return view.get_queryset().model
    except Exception:
        return None


def api_routes(user: Any, lists: bool = False) -> list[ApiRoute]:
    routes = []
    for raw, pattern in _walk(get_resolver().url_patterns):
        path = _clean(raw)
        if not path.startswith("api/v1/") or "openapi" in path or path.endswith("docs"):
            continue
        params = re.findall(r"<(\w+)>", path)
        callback = pattern.callback
        view_cls = getattr(callback, "cls", None)
        actions = getattr(callback, "actions", None) or {}
        if view_cls is None:
            continue
        if lists:
            if not params and actions.get("get") == "list":
                routes.append(ApiRoute(path, ["GET"], None, None, list_url="/" + path))
            continue
        if len(params) != 1:
            continue
        methods = (
            [m.upper() for m in actions if m not in ("head", "options")]
            if actions
            else [
                m.upper() for m in ("get", "post", "put", "patch", "delete") if hasattr(view_cls, m)
            ]
        )
        action = next(iter(actions.values()), "retrieve")
        model = _model_of(view_cls, action, user, {params[0]: str(uuid.uuid4())})
        if model in NOT_HOUSEHOLD_RECORDS:
            continue
        if model is None:
            raise AssertionError(
                f"{path}: cannot tell which model its id names; set `tenant_model` on the view"
            )
        root_key = getattr(view_cls, "root_key", None)
        routes.append(ApiRoute(path, methods, model, root_key))
    return routes


def _provider_records() -> None:
    from providers.models import ProviderAccount, ProviderConnection, Sync
    from tests.providers.factories import (
        ProviderAccountFactory,
        ProviderConnectionFactory,
        SyncFactory,
    )

    RECORD_FACTORIES[ProviderConnection] = lambda family: ProviderConnectionFactory(family=family)
    RECORD_FACTORIES[ProviderAccount] = lambda family: ProviderAccountFactory(
        connection__family=family
    )
    RECORD_FACTORIES[Sync] = lambda family: SyncFactory(connection__family=family)


_provider_records()


def _register_rules() -> None:
    from finance.models import Rule, RuleRun

    def rule(family: Family) -> Rule:
        return Rule.objects.create(
            family=family,
            name="theirs",
            conditions=[{"field": "name", "operator": "contains", "value": "x"}],
            actions=[{"type": "set_notes", "value": "y"}],
        )

    RECORD_FACTORIES[Rule] = rule
    RECORD_FACTORIES[RuleRun] = lambda family: RuleRun.objects.create(
        family=family, rule=rule(family)
    )


_register_rules()


def _register_exports() -> None:
    from exports.models import Export, Restore

    def export(family: Family) -> Export:
        """A complete export with its archive (an empty zip) on disk, so that its download
        answers its owner."""
        import zipfile
        from pathlib import Path

        from django.conf import settings

        record = Export.objects.create(family=family, status=Export.Status.COMPLETE)
        record.file_name = f"{family.pk}/{record.pk}.zip"
        path = Path(settings.EXPORTS_DIR) / record.file_name
        path.parent.mkdir(parents=True, exist_ok=True)
        zipfile.ZipFile(path, "w").close()
        record.save()
        return record

    RECORD_FACTORIES[Export] = export
    RECORD_FACTORIES[Restore] = lambda family: Restore.objects.create(family=family)


_register_exports()
