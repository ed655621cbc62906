"""API keys: random, shown once, stored as a SHA-256 digest beside a visible prefix.

A key reads `pfk_<prefix>_<secret>`; the prefix finds the row, the digest proves the key.
SHA-256 (not a slow password hash) is right here: the secret has 256 bits of entropy."""

from __future__ import annotations

import hashlib
import secrets
import string
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from finance.models import ApiKey, Family, User

KEY_PREFIX = "pfk"
_ALPHABET = string.ascii_lowercase + string.digits


def api_key_digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def api_key_split(raw: str) -> str | None:
    """The lookup prefix of a presented key, or None when it is not shaped like one of ours."""
    parts = raw.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or len(parts[1]) != 8:
        return None
    return parts[1]


def api_key_create(
    *,
    user: User,
    name: str,
    scope: str = ApiKey.SCOPE_READ_WRITE,
    expires_at: datetime | None = None,
) -> tuple[ApiKey, str]:
    """Create a key and return it with its plain text, which is never stored."""
    if scope not in (ApiKey.SCOPE_READ, ApiKey.SCOPE_READ_WRITE):
        raise ValueError(f"scope must be read or read_write, not {scope!r}")
    prefix = "".join(secrets.choice(_ALPHABET) for _ in range(8))
    raw = f"{KEY_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    key = ApiKey.objects.create(
        user=user,
        name=name,
        prefix=prefix,
        key_hash=api_key_digest(raw),
        scope=scope,
        expires_at=expires_at,
    )
    return key, raw


def api_key_revoke(*, key: ApiKey) -> ApiKey:
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
    return key


@transaction.atomic
def household_user_ensure(
    *,
    email: str,
    family_name: str | None = None,
    currency: str = "USD",
    password: str | None = None,
) -> User:
    """The user with this email, created with a household of their own when missing."""
    email = email.strip().lower()
    user = User.objects.filter(email=email).first()
    if user is None:
        family = Family.objects.create(
            name=family_name or f"{email.split('@')[0]}'s household", currency=currency
        )
        user = User.objects.create_user(
            email=email, password=password, family=family, is_staff=True
        )
    else:
        if user.family_id is None:
            user.family = Family.objects.create(name=family_name or email, currency=currency)
        if password is not None:
            user.set_password(password)
        user.is_staff = True
        user.save()
    from finance.services.households import household_permissions_grant

    household_permissions_grant(user=user)
    return user
