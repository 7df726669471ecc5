"""Device cookies (OWASP, "Slow down online guessing attacks with device cookies"): a
browser in which a person has signed in carries a signed cookie naming them, and the
per-account delay of web/throttle.py does not hold it. A stranger's guesses then slow only
the browsers that have never signed in as that person, theirs included, and the owner's own
browser signs in at once. The cookie's own failures are counted: past ``FAILURES`` in a
window it is a new device again, so a stolen laptop is no licence to guess.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from flask import Response, after_this_request, current_app, request
from itsdangerous import BadSignature, URLSafeTimedSerializer

from engine import runtime

COOKIE = "herald_device"
MAX_AGE = 180 * 86400  # re-issued at every sign-in: a browser in use keeps its pass
FAILURES = 5  # wrong passwords (or codes) from one device in a window before it waits too
_SALT = "herald device cookie v1"


def _serializer() -> URLSafeTimedSerializer:
    # Keyed by HERALD_SECRET_KEY through its own derivation: never the key itself.
    key = hmac.new(runtime.settings().secret_key.encode("utf-8"), b"herald device cookies",
                   hashlib.sha256).hexdigest()
    return URLSafeTimedSerializer(key, salt=_SALT)


def remember(user_id: str) -> None:
    """After a sign-in: this response gives the browser a new device cookie for the user."""
    value = _serializer().dumps({"u": user_id, "n": secrets.token_urlsafe(16)})
    secure = bool(current_app.config.get("SESSION_COOKIE_SECURE"))

    @after_this_request
    def _set(response: Response) -> Response:
        response.set_cookie(COOKIE, value, max_age=MAX_AGE, httponly=True, secure=secure,
                            samesite="Lax", path="/")
        return response


def device_of(user_id: str | None) -> str | None:
    """The nonce of this request's device cookie when it is valid and was issued to
    ``user_id``, else None (no cookie, another person's, forged or expired)."""
    raw = request.cookies.get(COOKIE)
    if not raw or not user_id or len(raw) > 400:
        return None
    try:
        data = _serializer().loads(raw, max_age=MAX_AGE)
    except BadSignature:
        return None
    if not isinstance(data, dict) or data.get("u") != user_id:
        return None
    nonce = data.get("n")
    return nonce if isinstance(nonce, str) else None
