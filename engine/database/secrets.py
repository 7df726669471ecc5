"""Encryption at rest for secrets that must be read back (signing secrets, provider credentials)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING

from engine.database.vocabulary import HASH_PREFIX
from engine.errors import UndecryptableSecret

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

_PREFIX = "enc:v1:"
# cryptography (about 9 MiB of a process's memory) is imported by the first encryption or
# decryption, not at start: most requests and jobs read no sealed value (docs/performance.md,
# "Memory at rest"). The Fernet is built once, from the key configure() derived.
_fernet_key: bytes | None = None
_cipher: Fernet | None = None
_invalid_token: type[Exception] = Exception  # cryptography.fernet.InvalidToken, once imported
_recipient_key: bytes | None = None
_raw_key: bytes | None = None
# Plaintexts by sealed value: each webhook attempt reads its workspace's secret sealed, and
# Fernet's HMAC check and AES cost more than the rest of the signing. A sealed value is
# unique per encryption (random IV), so a rotated secret is a new key here, never stale.
_opened: dict[str, str] = {}
_OPENED_MAX = 1024


def hkdf_sha256(key: bytes, salt: bytes, info: bytes) -> bytes:
    """32 bytes of HKDF-SHA256 (RFC 5869): one HMAC extracts, one expands (a single block).
    The standard library's HMAC, so deriving the keys at start loads no cryptography."""
    extracted = hmac.digest(salt, key, "sha256")
    return hmac.digest(extracted, info + b"\x01", "sha256")


def configure(secret_key: str) -> None:
    """Derive the at-rest key from HERALD_SECRET_KEY (HKDF, so the raw setting is never the key)."""
    global _cipher, _fernet_key, _recipient_key, _raw_key
    _raw_key = secret_key.encode("utf-8")
    derived = hkdf_sha256(_raw_key, b"herald-at-rest", b"herald secrets v1")
    _fernet_key = base64.urlsafe_b64encode(derived)
    _cipher = None
    _opened.clear()
    _recipient_key = hkdf_sha256(_raw_key, b"herald-recipients", b"herald recipient hash v1")


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
    global _cipher, _invalid_token
    cipher = _cipher
    if cipher is None:
        if _fernet_key is None:
            raise RuntimeError("engine.secrets.configure() has not been called")
        from cryptography.fernet import Fernet, InvalidToken

        _invalid_token = InvalidToken
        cipher = _cipher = Fernet(_fernet_key)
    return cipher


def encrypt(plaintext: str) -> str:
    return _PREFIX + _require().encrypt(plaintext.encode("utf-8")).decode("ascii")


def decrypt(token: str) -> str:
    plaintext = _opened.get(token)
    if plaintext is not None:
        return plaintext
    if not token.startswith(_PREFIX):
        raise ValueError("value is not an encrypted Herald secret")
    cipher = _require()
    try:
        plaintext = cipher.decrypt(token[len(_PREFIX) :].encode("ascii")).decode("utf-8")
    except _invalid_token:
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
