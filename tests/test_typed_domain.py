"""Services and selectors take typed keyword arguments, never a request's body or query dict
(issue 17, item 3): read from the code, as tests/finance/test_ledger_seam.py reads the seam."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICES = [
    *sorted(ROOT.glob("finance/services/*.py")),
    *sorted(ROOT.glob("imports/services/*.py")),
    *sorted(ROOT.glob("trades/services/*.py")),
    ROOT / "providers/services.py",
    ROOT / "providers/simplefin/setup.py",
]
SELECTORS = [
    *sorted(ROOT.glob("finance/selectors/*.py")),
    ROOT / "imports/selectors.py",
    ROOT / "providers/selectors.py",
    ROOT / "trades/selectors.py",
]
# A parameter with one of these names and an untyped mapping annotation is a request dict.
REQUEST_NAMES = {"data", "params", "body", "payload", "query", "changes", "fields", "items"}
UNTYPED = {"dict", "Any", "object", "Mapping", "QueryDict"}


def _untyped(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return True
    text = ast.unparse(annotation)
    base = text.split("[", 1)[0]
    args = text[len(base) :]
    return base in UNTYPED and (not args or "Any" in args or args == "[str, str]")


def _request_dict_parameters(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        if node.args.kwarg is not None:
            params.append(node.args.kwarg)
        for arg in params:
            if arg.arg in REQUEST_NAMES and _untyped(arg.annotation):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({arg.arg})")
    return found


@pytest.mark.parametrize("path", SERVICES + SELECTORS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_service_or_selector_takes_a_request_dict(path):
    assert not _request_dict_parameters(path)


@pytest.mark.parametrize("path", SELECTORS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_selector_reads_a_query_string(path):
    source = path.read_text()
    assert "query_params" not in source and "QueryFilters(" not in source, path


def test_the_check_can_fail(tmp_path):
    module = tmp_path / "services.py"
    module.write_text(
        "from typing import Any\n"
        "def thing_create(*, family, data: dict[str, Any]): ...\n"
        "def thing_list(*, family, params): ...\n"
        "def thing_update(*, thing, **fields: Any): ...\n"
        "def fine(*, family, name: str, data: ThingFields): ...\n"
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = _request_dict_parameters(module)
    finally:
        ROOT = saved
    assert [f.split(" ", 1)[1] for f in found] == [
        "thing_create(data)",
        "thing_list(params)",
        "thing_update(fields)",
    ]
