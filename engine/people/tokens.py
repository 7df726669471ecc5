"""One-time tokens for links (invitations, resets) and sessions: random, stored hashed."""

from __future__ import annotations

import hashlib
import secrets


def new_token() -> tuple[str, str]:
    """A token (256 bits) and the hash to store; the token itself is never stored."""
    token = secrets.token_urlsafe(32)
    return token, hash_token(token)


def hash_token(token: str) -> str:
    # 256 random bits: a plain SHA-256 is enough, no slow hash is needed to resist guessing.
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
