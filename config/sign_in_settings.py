"""Single sign-on settings (docs/web.md, "Security decisions"): HERALD_OIDC_ISSUER,
_CLIENT_ID, _CLIENT_SECRET, _ONLY and _ROLES_CLAIM, checked together at start-up."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from urllib.parse import urlsplit

_CLAIM = re.compile(r"[A-Za-z0-9_:/.\-]{1,100}")


class SignInSettingProblem(ValueError):
    """(setting, why): a sign-in setting that cannot work."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _issuer(raw: str) -> str:
    """An https URL (http only on a loopback host, for a test provider), no query or
    fragment; kept as written, since the ID token's ``iss`` must equal it exactly."""
    value = raw.strip()
    try:
        parts = urlsplit(value)
        host = parts.hostname or ""
    except ValueError as err:
        raise SignInSettingProblem("HERALD_OIDC_ISSUER", str(err)) from None
    if parts.scheme not in ("https", "http") or not host or parts.query or parts.fragment:
        raise SignInSettingProblem("HERALD_OIDC_ISSUER",
                                   f"expected an https URL with no query, got {value!r}")
    if parts.scheme == "http" and not _loopback(host):
        raise SignInSettingProblem("HERALD_OIDC_ISSUER",
                                   "must be https (http only for a loopback test provider)")
    return value


def oidc_settings(get: Callable[[str], str | None], truth: Callable[[str, str], bool]
                  ) -> dict[str, object]:
    """The settings' fields from the environment (``get``), or SignInSettingProblem."""
    values: dict[str, object] = {}
    issuer = (get("HERALD_OIDC_ISSUER") or "").strip()
    client_id = (get("HERALD_OIDC_CLIENT_ID") or "").strip()
    secret = get("HERALD_OIDC_CLIENT_SECRET") or ""
    only = truth("HERALD_OIDC_ONLY", get("HERALD_OIDC_ONLY") or "")
    claim = (get("HERALD_OIDC_ROLES_CLAIM") or "").strip()
    if issuer:
        values["oidc_issuer"] = _issuer(issuer)
        if not client_id:
            raise SignInSettingProblem("HERALD_OIDC_CLIENT_ID", "required with HERALD_OIDC_ISSUER")
        if not secret:
            raise SignInSettingProblem("HERALD_OIDC_CLIENT_SECRET",
                                       "required with HERALD_OIDC_ISSUER")
        values.update(oidc_client_id=client_id, oidc_client_secret=secret)
    elif only or client_id or claim:
        name = "HERALD_OIDC_ONLY" if only else (
            "HERALD_OIDC_CLIENT_ID" if client_id else "HERALD_OIDC_ROLES_CLAIM")
        raise SignInSettingProblem(name, "needs HERALD_OIDC_ISSUER")
    if claim and not _CLAIM.fullmatch(claim):
        raise SignInSettingProblem("HERALD_OIDC_ROLES_CLAIM", f"not a claim name: {claim!r}")
    values.update(oidc_only=only, oidc_roles_claim=claim)
    return values
