"""Encryption at rest for secrets that must be read back (signing secrets, provider credentials)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from engine.database.vocabulary import HASH_PREFIX
from engine.errors import UndecryptableSecret

_PREFIX = "enc:v1:"
_cipher: Fernet | None = None
_recipient_key: bytes | None = None
_raw_key: bytes | None = None
# Plaintexts by sealed value: each webhook attempt reads its workspace's secret sealed, and
# Fernet's HMAC check and AES cost more than the rest of the signing. A sealed value is
# unique per encryption (random IV), so a rotated secret is a new key here, never stale.
_opened: dict[str, str] = {}
_OPENED_MAX = 1024


def configure(secret_key: str) -> None:
    """Derive the at-rest key from HERALD_SECRET_KEY (HKDF, so the raw setting is never the key)."""
    global _cipher
    derived = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=b"herald-at-rest", info=b"herald secrets v1"
    ).derive(secret_key.encode("utf-8"))
    _cipher = Fernet(base64.urlsafe_b64encode(derived))
    _opened.clear()
    global _recipient_key, _raw_key
    _raw_key = secret_key.encode("utf-8")
    _recipient_key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=b"herald-recipients",
        info=b"herald recipient hash v1").derive(secret_key.encode("utf-8"))


def recipient_hash(key: str) -> str:
    """What a purged or erased recipient (its suppression key) is kept as: an HMAC keyed by
    a key derived from HERALD_SECRET_KEY, so the exact address typed into a search finds it,
    while the stored value names nobody to whoever reads the database without that key."""
    if _recipient_key is None:
        raise RuntimeError("engine.secrets.configure() has not been called")
    if key.startswith(HASH_PREFIX):
        return key  # already one
    digest = hmac.new(_recipient_key, key.strip().lower().encode("utf-8"), hashlib.sha256)
    return HASH_PREFIX + digest.hexdigest()[:40]


def _require() -> Fernet:
    if _cipher is None:
        raise RuntimeError("engine.secrets.configure() has not been called")
    return _cipher


def encrypt(plaintext: str) -> str:
    return _PREFIX + _require().encrypt(plaintext.encode("utf-8")).decode("ascii")


def decrypt(token: str) -> str:
    plaintext = _opened.get(token)
    if plaintext is not None:
        return plaintext
    if not token.startswith(_PREFIX):
        raise ValueError("value is not an encrypted Herald secret")
    try:
        plaintext = _require().decrypt(token[len(_PREFIX) :].encode("ascii")).decode("utf-8")
    except InvalidToken:
        raise UndecryptableSecret(
            "secret cannot be decrypted: HERALD_SECRET_KEY changed?") from None
    if len(_opened) >= _OPENED_MAX:
        _opened.clear()
    _opened[token] = plaintext
    return plaintext


def new_signing_secret() -> str:
    """A webhook signing secret; the HMAC key is exactly these UTF-8 characters (D7 in
    docs/api.md)."""
    return "whsec_" + secrets.token_urlsafe(32)


def new_inbound_secret() -> str:
    """A provider's inbound secret for one workspace: 160 random bits as 40 hex digits, safe
    unescaped in a URL's user part or query string."""
    return secrets.token_hex(20)


def keyed_digest(message: str) -> str:
    """HMAC-SHA256 of ``message`` keyed by HERALD_SECRET_KEY itself, as 40 hex digits: how
    webhook secrets were derived before they were stored (migrations copy them)."""
    if _raw_key is None:
        raise RuntimeError("engine.secrets.configure() has not been called")
    return hmac.new(_raw_key, message.encode("utf-8"), hashlib.sha256).hexdigest()[:40]


def new_api_key() -> str:
    return "hk_" + secrets.token_urlsafe(32)


def hash_api_key(value: str) -> str:
    """Keys carry 256 bits of entropy, so a plain SHA-256 is a safe, fast lookup hash."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()
