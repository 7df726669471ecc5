"""Headers that keep Herald's own pages out of other sites' frames and sniffers, and the
dev inbox out of reach of a DNS-rebinding page.

The web application (web/security.py) sets its own stricter policy; these apply to every
response, so the pages outside it (/dev/inbox, the unsubscribe page, /docs) are covered too.
"""

from __future__ import annotations

import ipaddress

from flask import Flask, Response, request

FRAME_ANCESTORS = "frame-ancestors 'none'"


def loopback_host(host: str) -> bool:
    """Whether a Host header names this machine's loopback: a rebinding page's Host is its
    own name, so answering only these keeps every tenant's dev mail from it."""
    name = host.strip().lower()
    if name.startswith("["):  # [::1]:8000
        name = name[1:].split("]", 1)[0]
    elif name.count(":") == 1:  # 127.0.0.1:8000, localhost:8000
        name = name.split(":", 1)[0]
    if name in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def protect(response: Response) -> Response:
    """nosniff on everything; no framing of any HTML page (both the old header and CSP)."""
    response.headers["X-Content-Type-Options"] = "nosniff"
    if response.mimetype == "text/html":
        response.headers.setdefault("X-Frame-Options", "DENY")
        policy = response.headers.get("Content-Security-Policy")
        if not policy:
            response.headers["Content-Security-Policy"] = FRAME_ANCESTORS
        elif "frame-ancestors" not in policy:
            policy = f"{policy.rstrip('; ')}; {FRAME_ANCESTORS}"
            response.headers["Content-Security-Policy"] = policy
    return response


def install(app: Flask) -> None:
    """Flask runs after_request hooks newest first: this one sees each view's own policy
    (as /docs sets it) and only adds what is missing; the web application's hook, run
    after it, keeps its own complete policy."""
    app.after_request(protect)


def refuse_foreign_host() -> Response | None:
    """A before_request for the dev inbox: 403 unless the Host is loopback."""
    if loopback_host(request.host):
        return None
    return Response("The dev inbox answers only on localhost.\n", status=403,
                    mimetype="text/plain")
