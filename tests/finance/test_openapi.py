from __future__ import annotations

import inspect
import re

import pytest
from openapi_spec_validator import validate

WRITE = {"post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from rest_framework.test import APIClient

    with django_db_blocker.unblock():
        response = APIClient().get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_document_is_valid_openapi_303(schema):
    assert schema["openapi"] == "3.0.3"
    assert schema["info"]["version"] == "v1"
    validate(schema)


def test_every_operation_declares_the_api_key_scheme(schema):
    assert "security" not in schema or schema["security"] == []
    assert schema["components"]["securitySchemes"]["X-Api-Key"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-Api-Key",
    }
    operations = [
        (path, method, op)
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if method in WRITE | {"get"}
    ]
    assert operations
    for path, method, op in operations:
        assert {"X-Api-Key": []} in op.get("security", []), (path, method)
        assert "401" in op["responses"], (path, method)
        if method in WRITE:
            assert "403" in op["responses"] and "422" in op["responses"], (path, method)


def test_yaml_and_docs_are_served(client):
    assert client.get("/api/v1/openapi.yaml").status_code == 200
    docs = client.get("/api/v1/docs")
    assert docs.status_code == 200
    assert b"cdn" not in docs.content.lower()


# --- Documentation for clients (issue 25) ---------------------------------------------------

DEVELOPER_WORDS = re.compile(
    r"\b(viewsets?|serializers?|querysets?|selectors?|services?|subclass(es)?|docstrings?|"
    r"kwargs|self|TODO|FIXME|XXX|results_key|root_key|request\.data)\b|\.py\b|"
    r"\b[a-z]+(\.[a-z_]+){2,}\b",  # dotted module paths: providers.simplefin.views
    re.IGNORECASE,
)
MAIN_OPERATIONS = [
    ("/api/v1/transactions", "post"),
    ("/api/v1/transactions/bulk", "post"),
    ("/api/v1/accounts", "post"),
    ("/api/v1/trades", "post"),
    ("/api/v1/imports", "post"),
    ("/api/v1/provider_connections", "post"),
]


def _operations(schema):
    return [
        (f"{method.upper()} {path}", op)
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if method in WRITE | {"get"}
    ]


def _docstrings() -> set[str]:
    """Every docstring of the modules that define the API's views: the text drf-spectacular
    would have shown had a description not been written for clients."""
    import finance.api.resources
    import finance.api.viewsets
    import finance.views.accounts
    import finance.views.catalog
    import finance.views.transactions
    import finance.views.transfers
    import imports.views
    import providers.simplefin.views
    import providers.views
    import trades.views

    modules = [
        finance.api.resources,
        finance.api.viewsets,
        finance.views.accounts,
        finance.views.catalog,
        finance.views.transactions,
        finance.views.transfers,
        imports.views,
        providers.simplefin.views,
        providers.views,
        trades.views,
    ]
    found = set()
    for module in modules:
        for obj in [module, *vars(module).values()]:
            members = [obj, *vars(obj).values()] if inspect.isclass(obj) else [obj]
            for member in members:
                doc = (
                    inspect.getdoc(member) if callable(member) or inspect.ismodule(member) else None
                )
                if doc and len(doc) > 20:
                    found.add(" ".join(doc.split()))
    return found


def looks_like_a_code_comment(text: str, docstrings: set[str]) -> str | None:
    """Why `text` reads as a developer's note rather than documentation, or None."""
    flat = " ".join(text.split())
    if len(flat) < 30:
        return "too short to tell a client anything"
    if not (flat[0].isupper() or flat[0] == "`"):
        return "does not start a sentence"
    if not flat.endswith((".", ".)", "`")):
        return "does not end a sentence"
    if any(doc in flat or flat in doc for doc in docstrings):
        return "is a docstring of the code"
    match = DEVELOPER_WORDS.search(flat)
    if match:
        return f"speaks of the code ({match.group(0)!r})"
    return None


def test_every_operation_has_a_summary_and_a_description_for_clients(schema):
    docstrings = _docstrings()
    problems = []
    summaries: dict[str, str] = {}
    for name, op in _operations(schema):
        summary = op.get("summary") or ""
        if not summary or len(summary) > 60 or summary.endswith(".") or not summary[0].isupper():
            problems.append(f"{name}: summary {summary!r}")
        if summary in summaries:
            problems.append(f"{name}: the same summary as {summaries[summary]}")
        summaries[summary] = name
        why = looks_like_a_code_comment(op.get("description") or "", docstrings)
        if why:
            problems.append(f"{name}: description {why}: {op.get('description')!r}")
    assert not problems, "\n".join(problems)


def test_component_descriptions_are_for_clients(schema):
    """drf-spectacular would describe a component with its serializer's docstring."""
    docstrings = _docstrings() | _serializer_docstrings()
    problems = []
    for name, component in schema["components"]["schemas"].items():
        description = component.get("description")
        if description is None or name.endswith("Enum"):
            continue
        why = looks_like_a_code_comment(description, docstrings)
        if why:
            problems.append(f"{name}: {why}: {description!r}")
    assert not problems, "\n".join(problems)


def _serializer_docstrings() -> set[str]:
    import finance.serializers.refs
    import finance.serializers.transactions
    import finance.serializers.transfers
    import trades.serializers

    found = set()
    for module in (
        finance.serializers.refs,
        finance.serializers.transactions,
        finance.serializers.transfers,
        trades.serializers,
    ):
        for obj in vars(module).values():
            doc = inspect.getdoc(obj) if inspect.isclass(obj) else None
            if doc and len(doc) > 20 and obj.__module__ == module.__name__:
                found.add(" ".join(doc.split()))
    return found


def test_the_code_comment_check_can_fail():
    docstrings = _docstrings()
    for text in (
        "Every query starts from the caller's household. `results_key` names the list body.",
        "A household-owned named record. Subclasses name their model, services and shapes.",
        "Only the reconnect action: the connection resource lives in providers.views.",
        "Categories, merchants and tags: list, get, create, update (PATCH; PUT behaves the same), "
        'delete. Each request body carries its root key (`{"category": {...}}`).',
        "The list of things",
        "",
    ):
        assert looks_like_a_code_comment(text, docstrings), text


def test_component_names_are_clean(schema):
    names = list(schema["components"]["schemas"])
    assert not [n for n in names if n.endswith("RequestRequest") or "Serializer" in n], names
    assert "TransactionCreateRequest" in names and "PatchedTransactionUpdateRequest" in names


def test_closed_value_sets_are_listed_as_enums(schema):
    components = schema["components"]["schemas"]

    def enum(component: str, field: str) -> list[str]:
        prop = components[component]["properties"][field]
        refs = [prop.get("$ref")] + [p.get("$ref") for p in prop.get("oneOf", [])]
        refs += [p.get("$ref") for p in prop.get("allOf", [])]
        values = list(prop.get("enum", []))
        for ref in filter(None, refs):
            values += components[ref.rsplit("/", 1)[1]]["enum"]
        return values

    create = "ImportCreateRequest"
    assert "%d/%m/%Y" in enum(create, "date_format")
    assert set(enum(create, "number_format")) == {"1,234.56", "1.234,56", "1 234,56", "1,234"}
    assert set(enum(create, "signage_convention")) == {"inflows_positive", "inflows_negative"}
    assert {"", ",", ";", "tab"} <= set(enum(create, "col_sep"))
    from imports.models import Import

    assert enum(create, "type") == Import.Type.values
    assert "pending" in enum("Import", "status") and "revert_failed" in enum("Import", "status")
    assert "mismatch" in enum("ImportReadback", "status")
    assert set(enum("ImportMappingChangeRequest", "kind")) == {"category", "tag", "account"}
    assert "credit_card" in enum("AccountFieldsRequest", "account_type")
    assert "cc_payment" in enum("Transaction", "kind")
    assert enum("RejectedTransferLeg", "kind") == enum("Transaction", "kind")
    assert set(enum("ProviderConnectionCreateRequest", "provider")) == {"lunchflow", "simplefin"}
    assert "withdrawal" in enum("TradeCreateFieldsRequest", "type")
    import_list = schema["paths"]["/api/v1/imports"]["get"]["parameters"]
    status = next(p for p in import_list if p["name"] == "status")
    assert "complete" in status["schema"]["enum"]


@pytest.mark.parametrize(("path", "method"), MAIN_OPERATIONS)
def test_main_operations_show_request_examples(schema, path, method):
    content = schema["paths"][path][method]["requestBody"]["content"]
    examples = content["application/json"].get("examples") or {}
    assert examples, f"{method.upper()} {path} has no example"
    for example in examples.values():
        assert isinstance(example["value"], dict) and example.get("summary")
