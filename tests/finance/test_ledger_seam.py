"""The ledger's one way in (issue 17): nothing outside finance/ledger/ writes transaction rows
or runs the after-write derivation, and domain code knows nothing of HTTP.

The runtime half is tests/ledger_guard.py, around every test; these tests read the code and
prove that the guard itself can fail."""

from __future__ import annotations

import ast
import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection

from finance.models import Transaction
from tests.factories import TransactionFactory
from tests.ledger_guard import ROOT, LedgerWriteGuard

APPS = ("core", "config", "exports", "finance", "imports", "providers", "trades")
WRITE_METHODS = {
    "create",
    "update",
    "delete",
    "bulk_create",
    "bulk_update",
    "get_or_create",
    "update_or_create",
}
INTERNALS = ("finance.ledger.",)  # only the package's public names, from `finance.ledger`
DOMAIN_DIRS = ("services", "selectors", "models", "ledger", "sync")
HTTP_MODULES = ("rest_framework", "finance.api", "drf_spectacular")


def project_modules() -> list[Path]:
    out = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/" in rel or "/testing/" in rel:
                continue
            out.append(path)
    return out


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _imports(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_the_scan_sees_the_project():
    paths = {p.relative_to(ROOT).as_posix() for p in project_modules()}
    assert "finance/ledger/batch.py" in paths and "imports/services/publish.py" in paths
    assert len(paths) > 100


@pytest.mark.parametrize("path", project_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_transaction_writes_or_ledger_internals_outside_the_ledger(path):
    rel = path.relative_to(ROOT).as_posix()
    if rel.startswith("finance/ledger/"):
        return
    tree = ast.parse(path.read_text(), filename=rel)
    problems = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in WRITE_METHODS
            and _root_name(node.func.value) == "Transaction"
        ):
            problems.append(f"line {node.lineno}: Transaction...{node.func.attr}()")
    problems.extend(f"imports {name}" for name in _imports(tree) if name.startswith(INTERNALS))
    assert not problems, f"{rel} writes ledger rows or reaches into the ledger: {problems}"


@pytest.mark.parametrize("path", project_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_domain_code_imports_nothing_of_http(path):
    rel = path.relative_to(ROOT).as_posix()
    parts = rel.split("/")
    if parts[1].removesuffix(".py") not in DOMAIN_DIRS and parts[0] != "core":
        return
    tree = ast.parse(path.read_text(), filename=rel)
    bad = [name for name in _imports(tree) if name.startswith(HTTP_MODULES)]
    assert not bad, f"{rel} imports the HTTP layer: {bad}"


def _run_as(module: str, source: str, namespace: dict) -> None:
    """Run `source` as if it were code of the project module `module`."""
    exec(compile(source, str(ROOT / module), "exec"), namespace)


@pytest.mark.django_db
def test_the_guard_catches_a_write_from_outside_the_ledger(
    alice, _ledger_rows_written_by_the_ledger_only
):
    txn = TransactionFactory(account=alice.account(), amount=Decimal("5"), date=dt.date(2024, 5, 1))
    guard = LedgerWriteGuard()
    namespace = {"Transaction": Transaction, "pk": txn.pk}
    with connection.execute_wrapper(guard):
        _run_as(
            "imports/services/rogue.py",
            "Transaction.objects.filter(pk=pk).update(name='x')",
            namespace,
        )
        _run_as(
            "finance/ledger/rogue.py",
            "Transaction.objects.filter(pk=pk).update(name='y')",
            namespace,
        )
        TransactionFactory(account=txn.account, amount=Decimal("1"), date=dt.date(2024, 5, 2))
    assert len(guard.violations) == 1
    assert guard.violations[0].startswith("imports/services/rogue.py wrote finance_transaction")
    assert _ledger_rows_written_by_the_ledger_only.violations == guard.violations
    _ledger_rows_written_by_the_ledger_only.violations.clear()  # seen: this test's own rogue


@pytest.mark.django_db
def test_a_single_create_pays_no_bulk_machinery(alice, django_assert_max_num_queries):
    """One row takes plain statements: no temporary table, no COPY."""
    from django.test.utils import CaptureQueriesContext

    account = alice.account()
    with CaptureQueriesContext(connection) as queries:
        response = alice.client.post(
            "/api/v1/transactions",
            {
                "transaction": {
                    "account_id": str(account.pk),
                    "date": "2024-05-01",
                    "amount": "5",
                    "name": "Coffee",
                    "external_id": "c-1",
                }
            },
            format="json",
        )
    assert response.status_code == 201
    sql = " ".join(q["sql"] for q in queries.captured_queries).upper()
    assert "TEMPORARY" not in sql and "COPY" not in sql
