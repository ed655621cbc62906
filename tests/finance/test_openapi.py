from __future__ import annotations

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
