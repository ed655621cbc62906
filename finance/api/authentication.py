"""`X-Api-Key` authentication. Keys are looked up by their visible prefix and checked against
the stored SHA-256 digest in constant time."""

from __future__ import annotations

import hmac
from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from finance.models import ApiKey, User
from finance.services.api_keys import api_key_digest, api_key_split

HEADER = "HTTP_X_API_KEY"
LAST_USED_RESOLUTION = timedelta(minutes=1)  # don't write on every request


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[User, ApiKey]:
        raw = request.META.get(HEADER, "")
        if not raw:
            raise exceptions.NotAuthenticated("Send your API key in the X-Api-Key header.")
        prefix = api_key_split(raw)
        # The prefix is unique: no ordering to compile or sort by.
        keys = ApiKey.objects.select_related("user", "user__family").filter(prefix=prefix)
        key = next(iter(keys.order_by()[:1]), None) if prefix else None
        if key is None or not hmac.compare_digest(key.key_hash, api_key_digest(raw)):
            raise exceptions.AuthenticationFailed("The API key is not valid.")
        if key.revoked_at is not None:
            raise exceptions.AuthenticationFailed("The API key has been revoked.")
        now = timezone.now()
        if key.expires_at is not None and key.expires_at <= now:
            raise exceptions.AuthenticationFailed("The API key has expired.")
        if not key.user.is_active or key.user.family_id is None:
            raise exceptions.AuthenticationFailed("The API key's user cannot use the API.")
        if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
            key.last_used_at = now
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return "X-Api-Key"


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "finance.api.authentication.ApiKeyAuthentication"
    name = "X-Api-Key"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "X-Api-Key"}
