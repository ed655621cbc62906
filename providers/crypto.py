"""Credentials at rest: Fernet (AES-128-CBC + HMAC) keyed from settings.FIELD_ENCRYPTION_KEY,
or derived from SECRET_KEY when that is unset. A valid Fernet key is used as is; any other
value is stretched with SHA-256 so that operators can set a passphrase."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet() -> Fernet:
    configured = getattr(settings, "FIELD_ENCRYPTION_KEY", "") or ""
    if configured:
        try:
            return Fernet(configured.encode())
        except (ValueError, TypeError):
            material = configured
    else:
        material = "field-encryption:" + settings.SECRET_KEY
    key = base64.urlsafe_b64encode(hashlib.sha256(material.encode()).digest())
    return Fernet(key)


def encrypt_secret(plain: str) -> str:
    return _fernet().encrypt(plain.encode()).decode()


def decrypt_secret(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:  # key rotated without re-encrypting
        raise ValueError("the stored credential cannot be decrypted with the current key") from exc
