"""Hub credentials encrypted at rest with Fernet, keyed from FLEETUI_CREDENTIALS_KEY.

Two shapes: {"token", "ca_data", "insecure"} or {"kubeconfig": <yaml text>, "context"}.
"""

import base64
import hashlib
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# Only with DEBUG on or under pytest; anything stored with it is readable by anyone with the source.
DEV_CREDENTIALS_KEY = "dev-insecure-fleetui-credentials-key"

KEY_REQUIRED = (
    "FLEETUI_CREDENTIALS_KEY is not set: hub credentials are encrypted with it. "
    "Set it to a long random string (keep it; changing it makes stored credentials unreadable)."
)


class CredentialsError(ValueError):
    """Stored credentials cannot be decrypted (another key) or are malformed."""


def _fernet() -> Fernet:
    secret = settings.FLEETUI_CREDENTIALS_KEY
    if not secret:
        if not (settings.DEBUG or settings.TESTING):
            raise ImproperlyConfigured(KEY_REQUIRED)
        secret = DEV_CREDENTIALS_KEY
    # Any string is accepted; Fernet needs 32 url-safe base64 bytes.
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest()))


def encrypt(value: dict[str, Any]) -> str:
    """A Fernet token of `value` as JSON; an empty dict stores nothing."""
    if not value:
        return ""
    return _fernet().encrypt(json.dumps(value, sort_keys=True).encode()).decode()


def decrypt(token: str) -> dict[str, Any]:
    if not token:
        return {}
    try:
        value = json.loads(_fernet().decrypt(token.encode()))
    except InvalidToken:
        raise CredentialsError(
            "stored hub credentials cannot be decrypted: FLEETUI_CREDENTIALS_KEY differs from the "
            "key they were stored with; store them again (`hubs add NAME ...`)"
        ) from None
    if not isinstance(value, dict):
        raise CredentialsError("stored hub credentials are not a JSON object")
    return value
