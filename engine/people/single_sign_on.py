"""Single sign-on with OpenID Connect (Authlib's client, joserfc for the ID token): the
authorization code flow with PKCE (S256), ``state`` and ``nonce``.

The issuer's metadata comes from its discovery document (HERALD_OIDC_ISSUER +
``/.well-known/openid-configuration``, whose ``issuer`` must equal the setting) and is
kept an hour per process; its signing keys (``jwks_uri``) are kept until a token names a
key id the copy lacks, then fetched again (at most once a minute, so a forged key id
cannot make every sign-in call the issuer). The ID token is checked here, never taken on
trust from the token response: its signature by one of those keys (asymmetric algorithms
only: never ``none``, never a secret-keyed HMAC), ``iss``, ``aud`` (and ``azp`` when it has
several audiences), ``exp``, ``iat`` and the ``nonce`` this browser's request carried.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from engine import runtime
from engine.people.errors import PeopleError

# Authlib, joserfc and requests (about 19 MiB) are imported where a sign-in uses them: the
# sign-in page asks only ``configured()``, and most installations use no single sign-on.
if TYPE_CHECKING:
    from authlib.integrations.requests_client import OAuth2Session
    from joserfc.jwk import KeySet

SCOPE = "openid email profile"
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
              "ES512", "EdDSA")
METADATA_SECONDS = 3600
JWKS_REFRESH_AFTER = 60.0  # seconds between two fetches caused by unknown key ids
TIMEOUT = 10
LEEWAY = 60  # seconds of clock difference allowed on exp and iat

_lock = threading.Lock()
_metadata: dict[str, Any] = {}  # issuer -> (fetched at, document)
_keys: dict[str, Any] = {}  # jwks_uri -> (fetched at, KeySet)


class Refused(PeopleError):
    """The provider's answer was not accepted; the message says why, in plain words."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=403)


@dataclass(frozen=True)
class Started:
    """Where to send the browser, and what its session keeps until it comes back."""

    url: str
    pending: dict[str, str]


def configured() -> bool:
    settings = runtime.settings()
    return bool(settings.oidc_issuer and settings.oidc_client_id)


def forget() -> None:
    """Drop this process's copies of the metadata and keys (tests, a changed issuer)."""
    with _lock:
        _metadata.clear()
        _keys.clear()


def _get_json(url: str) -> dict[str, Any]:
    import requests

    try:
        response = requests.get(url, timeout=TIMEOUT, allow_redirects=False)
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as err:
        raise PeopleError(f"The single sign-on provider could not be reached: {err}",
                          status=502) from None
    if not isinstance(document, dict):
        raise PeopleError("The single sign-on provider's answer is not a JSON object.",
                          status=502)
    return document


def metadata() -> dict[str, Any]:
    """The issuer's discovery document (kept an hour)."""
    issuer = runtime.settings().oidc_issuer
    with _lock:
        kept = _metadata.get(issuer)
    if kept and time.monotonic() - kept[0] < METADATA_SECONDS:
        return kept[1]
    document = _get_json(issuer.rstrip("/") + "/.well-known/openid-configuration")
    if document.get("issuer") != issuer:
        raise PeopleError(f"The provider's discovery document names another issuer "
                          f"({document.get('issuer')!r}, not {issuer!r}).", status=502)
    for needed in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
        if not isinstance(document.get(needed), str):
            raise PeopleError(f"The provider's discovery document has no {needed}.",
                              status=502)
    with _lock:
        _metadata[issuer] = (time.monotonic(), document)
    return document


def _key_set(kid: str | None) -> KeySet:
    """The issuer's keys, fetched again when ``kid`` is not among them (rate-limited)."""
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet

    uri = metadata()["jwks_uri"]
    with _lock:
        kept = _keys.get(uri)
    if kept is not None:
        known = {key.kid for key in kept[1].keys}
        if kid in known or time.monotonic() - kept[0] < JWKS_REFRESH_AFTER:
            return kept[1]
    try:
        key_set = KeySet.import_key_set(_get_json(uri))  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError, KeyError) as err:
        raise PeopleError(f"The provider's signing keys could not be read: {err}",
                          status=502) from None
    with _lock:
        _keys[uri] = (time.monotonic(), key_set)
    return key_set


def _client(redirect_uri: str) -> OAuth2Session:
    from authlib.integrations.requests_client import OAuth2Session

    settings = runtime.settings()
    client = OAuth2Session(settings.oidc_client_id, settings.oidc_client_secret,
                           scope=SCOPE, redirect_uri=redirect_uri,
                           code_challenge_method="S256")
    client.timeout = TIMEOUT  # type: ignore[attr-defined]
    return client


def begin(redirect_uri: str) -> Started:
    """The authorization request: a fresh state, nonce and PKCE verifier."""
    pending = {"state": secrets.token_urlsafe(32), "nonce": secrets.token_urlsafe(32),
               "verifier": secrets.token_urlsafe(48)}
    url, _ = _client(redirect_uri).create_authorization_url(
        metadata()["authorization_endpoint"], state=pending["state"],
        nonce=pending["nonce"], code_verifier=pending["verifier"])
    return Started(url, pending)


def finish(pending: dict[str, str] | None, answer: dict[str, str],
           redirect_uri: str) -> tuple[dict[str, Any], str]:
    """The browser came back: check ``state``, redeem the code (with the PKCE verifier) and
    verify the ID token; returns (its claims, the raw token for RP-initiated logout)."""
    import requests
    from authlib.integrations.base_client.errors import OAuthError
    from authlib.oauth2.rfc6749.errors import OAuth2Error

    if not pending or not isinstance(pending, dict):
        raise Refused("Start again: this single sign-on answer belongs to no sign-in here.")
    state = answer.get("state") or ""
    if not secrets.compare_digest(state.encode(), str(pending.get("state", "")).encode()):
        raise Refused("Start again: the answer's state does not match this sign-in.")
    if answer.get("error"):
        raise Refused(f"The provider did not sign you in: {answer['error'][:100]}.")
    code = answer.get("code")
    if not code:
        raise Refused("The provider's answer has no code.")
    try:
        token = _client(redirect_uri).fetch_token(
            metadata()["token_endpoint"], grant_type="authorization_code", code=code,
            code_verifier=pending["verifier"])
    except (OAuthError, OAuth2Error, requests.RequestException, ValueError, KeyError) as err:
        raise Refused(f"The provider refused the code: {err}") from None
    id_token = token.get("id_token")
    if not isinstance(id_token, str):
        raise Refused("The provider's answer has no ID token.")
    return verify_id_token(id_token, pending["nonce"]), id_token


def verify_id_token(id_token: str, nonce: str) -> dict[str, Any]:
    """The ID token's claims, once its signature, issuer, audience, times and nonce are
    right; Refused otherwise."""
    from joserfc import jws, jwt
    from joserfc.errors import JoseError

    settings = runtime.settings()
    try:
        header = jws.extract_compact(id_token.encode()).protected
    except (JoseError, ValueError) as err:
        raise Refused(f"The ID token could not be read: {err}") from None
    if header.get("alg") not in ALGORITHMS:
        raise Refused(f"The ID token's algorithm {header.get('alg')!r} is not accepted.")
    try:
        decoded = jwt.decode(id_token, _key_set(header.get("kid")), algorithms=list(ALGORITHMS))
    except (JoseError, ValueError) as err:
        raise Refused(f"The ID token's signature is not the provider's: {err}") from None
    claims = decoded.claims
    registry = jwt.JWTClaimsRegistry(
        leeway=LEEWAY, iss={"essential": True, "value": settings.oidc_issuer},
        aud={"essential": True, "value": settings.oidc_client_id},
        exp={"essential": True}, iat={"essential": True}, sub={"essential": True},
        nonce={"essential": True, "value": nonce})
    try:
        registry.validate(claims)
    except JoseError as err:
        raise Refused(f"The ID token was refused: {err}") from None
    audience = claims.get("aud")
    if isinstance(audience, list) and len(audience) > 1 and \
            claims.get("azp") != settings.oidc_client_id:
        raise Refused("The ID token was issued to another party (azp).")
    return claims


def origins() -> list[str]:
    """The origins the browser is sent to: the issuer's, and its endpoints' once the
    metadata is known (never fetched for this: every page asks)."""
    issuer = runtime.settings().oidc_issuer
    found = {_origin(issuer)}
    with _lock:
        kept = _metadata.get(issuer)
    if kept:
        for name in ("authorization_endpoint", "end_session_endpoint"):
            if isinstance(kept[1].get(name), str):
                found.add(_origin(kept[1][name]))
    return sorted(origin for origin in found if origin)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.netloc or \
            not re.fullmatch(r"[A-Za-z0-9.\-:\[\]]+", parts.netloc):
        return ""
    return f"{parts.scheme}://{parts.netloc}"


def logout_url(id_token: str | None, after: str) -> str | None:
    """The issuer's RP-initiated logout URL, when its metadata offers one."""
    try:
        endpoint = metadata().get("end_session_endpoint")
    except PeopleError:
        return None
    if not isinstance(endpoint, str) or not endpoint.startswith(("https://", "http://")):
        return None
    query = {"post_logout_redirect_uri": after, "client_id": runtime.settings().oidc_client_id}
    if id_token:
        query["id_token_hint"] = id_token
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(query)}"
