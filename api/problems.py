"""Problem details (RFC 7807, D3, docs/api.md): the one place an error becomes a response."""

from __future__ import annotations

import logging
import re
import secrets
from http import HTTPStatus
from typing import Any

from flask import Response, g, json, request

from engine.errors import ApiError
from engine.formats import uuid_text

log = logging.getLogger("herald.api")
PROBLEM_JSON = "application/problem+json"
# W3C Trace Context: lower-case hex only; a later version may add fields after the flags.
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?")
_CORRELATION = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def correlation_id(environ: dict[str, Any]) -> str:
    """The caller's X-Correlation-Id when it is safe to echo, else a fresh one (``environ``:
    the request's WSGI environment)."""
    given = environ.get("HTTP_X_CORRELATION_ID", "")
    return given if _CORRELATION.match(given) else uuid_text.random_hex()


def trace_id() -> str:
    """From a valid W3C traceparent (not all zeros), else generated.

    Made only for a problem response, the one place it is shown: a request that succeeds
    never reads the header nor draws random bytes for it.
    """
    match = _TRACEPARENT.fullmatch(request.headers.get("traceparent", "").strip())
    if match and match[1] != "ff" and (match[1] != "00" or match[4] is None) and \
            match[2] != "0" * 32 and match[3] != "0" * 16:
        return match[2]
    return secrets.token_hex(16)


def problem(status: int, detail: str | None = None, error_code: str | None = None,
            errors: dict[str, list[str]] | None = None, error_codes: list[str] | None = None,
            headers: dict[str, str] | None = None) -> Response:
    phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
    body: dict[str, Any] = {
        "type": f"urn:herald:error:{error_code}" if error_code else "about:blank",
        "title": phrase,
        "status": status,
        "detail": detail or phrase,
        "instance": request.path,
        "errorCode": error_code,
        "correlationId": g.get("correlation_id") or correlation_id(request.environ),
        "traceId": trace_id(),
    }
    if errors is not None:
        body["errors"] = errors
        body["errorCodes"] = error_codes or []
    response = Response(json.dumps(body), status=status, mimetype=PROBLEM_JSON)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def from_api_error(err: ApiError) -> Response:
    return problem(err.status, err.detail, err.error_code, err.errors, err.error_codes,
                   err.headers)


def bare(status: int) -> Response:
    """413 from the gateway: status only, no errorCode (spec 7, docs/api.md)."""
    return Response(b"", status=status, mimetype="text/plain")
