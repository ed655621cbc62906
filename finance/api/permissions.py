from __future__ import annotations

from rest_framework import permissions
from rest_framework.request import Request

from finance.models import ApiKey


class HasApiKeyScope(permissions.BasePermission):
    """Any valid key may read; writing needs a `read_write` key."""

    message = "This API key has the read scope; this operation needs a read_write key."

    def has_permission(self, request: Request, view: object) -> bool:
        key = request.auth
        if not isinstance(key, ApiKey):
            return False
        return request.method in permissions.SAFE_METHODS or key.scope == ApiKey.SCOPE_READ_WRITE
