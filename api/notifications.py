"""The three operations of spec section 4."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from flask import Request, Response, g, request
from flask_smorest import Blueprint
from werkzeug.datastructures import Headers
from werkzeug.exceptions import ClientDisconnected

from api import examples
from api.previews import preview_text
from api.schemas import ApiKeyValidationResponse, PreviewResponse, ProblemDetails, SendResponse
from api.views import ApiView
from engine import sending
from engine.catalog import keycache
from engine.errors import ApiError, FieldErrors
from engine.formats import json_limits, json_text
from engine.sending import body_gate

blp = Blueprint("notifications", __name__, url_prefix="/api/v1",
                description="Send and preview notifications; check an API key.")
SECURITY = [{"ApiKey": []}]
REQUEST_BODY = {"required": True, "content": {"application/json": {
    "schema": {"$ref": "#/components/schemas/NotificationRequest"},
    "example": examples.SEND_REQUEST}}}


RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait: until the rate-limit window "
                                              "resets (429), the request in flight ends (409), "
                                              "or the service is back (503)",
                               "schema": {"type": "integer", "minimum": 1}}}
IDEMPOTENCY_HEADER = {
    "name": "Idempotency-Key", "in": "header", "required": False,
    "description": "A Herald extension (docs/api.md): retrying a send with the same key and "
                   "the same body within 24 hours returns the first answer again and creates "
                   "nothing. 1 to 255 printable ASCII characters; scoped to the workspace.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255,
               "pattern": "^[\\x20-\\x7E]+$"},
    "example": "order-1001-welcome"}
REPLAYED = {"Idempotent-Replayed": {
    "description": "true when this is the first answer to the Idempotency-Key given again",
    "schema": {"type": "string", "enum": ["true"]}}}


def _documented(decorator: Callable[[Callable], Callable]) -> Callable[[Callable], Callable]:
    """A flask-smorest documentation decorator that leaves the view itself in place.

    ``doc`` and ``alt_response`` only document, yet each wraps the view in a layer that
    looks up the app context and checks for a coroutine on every request (nine layers a
    send); the view takes the documentation and stays unwrapped. So does ``response``
    here: these views answer a Response, which its layer passes on untouched.
    """

    def apply(view: Callable) -> Callable:
        view._apidoc = decorator(view)._apidoc  # type: ignore[attr-defined]
        return view
    return apply


def _errors(*statuses: int, operation: str = "send", path: str = ""):
    """alt_response documentation for every error status, each with an example."""

    def wrap(view):
        for status in statuses:
            if status == 413:
                # The gateway's answer: no body at all, so no problem details either.
                view = _documented(blp.alt_response(
                    413, description=examples.ERROR_DESCRIPTIONS[413], content_type="text/plain",
                    example="", schema={"type": "string", "maxLength": 0}))(view)
                continue
            view = _documented(blp.alt_response(
                status, schema=ProblemDetails, content_type="application/problem+json",
                description=examples.describe(status, operation)[0],
                headers=RETRY_AFTER if status in (409, 429, 503) else None,
                example=examples.problem(status, operation, path)))(view)
        return view
    return wrap


def read_json(raw: bytes) -> Any:
    """The JSON body; None for an absent or null body; ApiError for anything unparsable,
    and for a string that holds a lone surrogate: that is not text, and no database,
    mail or HTTP header could carry it."""
    if not raw.strip():
        return None
    try:
        return json_limits.loads_text(raw)
    except (json_limits.StructureRefused, json_limits.NotText) as refused:  # ValueErrors too
        message = str(refused)
    except ValueError:
        message = "the body is not valid JSON"
    errors = FieldErrors()
    errors.add("$", "notifications.request_malformed", message)
    errors.raise_if_any()


def read_exactly(stream: Any, size: int) -> bytes:
    """``size`` bytes of the server's stream, as ``get_data`` reads a body that gave its
    Content-Length, without the stream wrapper werkzeug builds for the read (about 3% of a
    preview's instructions); a body cut short is werkzeug's ClientDisconnected."""
    raw = stream.read(size)
    if len(raw) != size:
        raise ClientDisconnected()
    return raw


def declared_length(environ: dict[str, Any]) -> int | None:
    """The Content-Length a request gave, when it is a plain decimal number."""
    length = environ.get("CONTENT_LENGTH")
    return int(length) if length and length.isascii() and length.isdigit() else None


def _body(req: Request) -> bytes:
    """The body of a request through Flask: read straight off the server's stream when it
    gave its Content-Length (the gateway check refused one over the limit), else
    ``get_data``."""
    environ = req.environ
    size, stream = declared_length(environ), environ.get("wsgi.input")
    if stream is None or size is None:
        return req.get_data(cache=False)
    return read_exactly(stream, size)


def answer_text(data: dict[str, Any]) -> str:
    """An answer's JSON, written straight from what the engine returns: it is already the
    documented shape (the schemas test it), which a marshmallow dump would only copy."""
    return json_text.dumps(data)


def _json(data: dict[str, Any], status: int) -> Response:
    """A Response passes flask-smorest untouched: no marshmallow dump."""
    return json_response(answer_text(data), status)


# A status as werkzeug writes it ("202 ACCEPTED"), and its code.
STATUSES = {code: (made.status, made.status_code)
            for code in (200, 202) for made in (Response(status=code),)}


def json_headers(data: bytes) -> list[tuple[str, str]]:
    """A JSON answer's own two headers, as werkzeug would write them for ``data``."""
    return [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]


def json_response(text: str, status: int) -> Response:
    """``Response(text, status=status, mimetype="application/json")``, the same object, its
    two headers written in directly: werkzeug checks each value it is given for a newline
    (a regular expression each) and looks the mimetype up, about 25,000 instructions
    a response, for a constant and a number."""
    data = text.encode()
    headers = Headers()
    headers._list = json_headers(data)
    response = Response.__new__(Response)
    response.headers = headers
    response._status, response._status_code = STATUSES[status]
    response.direct_passthrough = False
    response._on_close = []
    response.response = [data]
    return response


class Call(NamedTuple):
    """What an operation reads of its request, read once, whether Flask or
    api/direct_routes.py dispatched it."""
    header: str | None  # X-Api-Key
    ip: str
    length: int | None  # Content-Length
    body: Callable[[], bytes]  # reads the raw body; called at most once
    correlation_id: str
    idempotency_key: str | None


class Answer(NamedTuple):
    """An operation's answer: its JSON and status, and the correlation id its
    X-Correlation-Id gives (a replay's is the first answer's)."""
    text: str
    status: int
    correlation_id: str
    replayed: bool = False


def _flask_call() -> Call:
    # The request and g themselves: each read through Flask's proxies first fails the
    # ordinary way (an AttributeError built and dropped).
    req = request._get_current_object()  # type: ignore[attr-defined]
    glob = g._get_current_object()  # type: ignore[attr-defined]
    environ = req.environ
    raw = glob.get("raw_body")  # a chunked body, already read by the gateway check
    return Call(environ.get("HTTP_X_API_KEY"), environ.get("REMOTE_ADDR") or "",
                req.content_length, (lambda: raw) if raw is not None else partial(_body, req),
                glob.correlation_id, environ.get("HTTP_IDEMPOTENCY_KEY"))


def _flask_answer(answer: Answer) -> Response:
    response = json_response(answer.text, answer.status)
    if answer.replayed:
        g.correlation_id = answer.correlation_id  # stamped as X-Correlation-Id
        response.headers["Idempotent-Replayed"] = "true"
    return response


def _body_or_error(call: Call) -> tuple[Any, ApiError | None, keycache.Found | None]:
    """The body (or its parse's error), and the key's look-up for admission to use."""
    # A request admission will refuse whatever it holds (no valid key, an address or key
    # over its rate limit) is not parsed: admission then answers 401 or 429 in D1's order.
    gate = body_gate.check(call.header, call.ip, call.length)
    if not gate.parse:
        return None, None, gate.found
    try:
        return read_json(call.body()), None, gate.found
    except ApiError as err:
        return None, err, gate.found


def send_answer(call: Call) -> Answer:
    """Spec 4.1: the send's 202, or an ApiError."""
    body, parse_error, found = _body_or_error(call)
    try:
        answer = sending.send(body, call.header, call.ip, call.correlation_id,
                              parse_error=parse_error, idempotency_key=call.idempotency_key,
                              found=found)
    except sending.Replayed as replay:
        # The first answer again, correlationId and all (X-Correlation-Id included).
        return Answer(answer_text(replay.answer), 202, replay.answer["correlationId"],
                      replayed=True)
    return Answer(answer_text(answer), 202, call.correlation_id)


def preview_answer(call: Call) -> Answer:
    """Spec 4.2: the preview's 200, or an ApiError."""
    body, parse_error, found = _body_or_error(call)
    preview = sending.preview(body, call.header, call.ip, parse_error=parse_error,
                              found=found)
    return Answer(preview_text(preview), 200, call.correlation_id)


@blp.route("/notifications/send")
class Send(ApiView):
    @_documented(blp.doc(operationId="sendNotification", security=SECURITY,
                         requestBody=REQUEST_BODY, parameters=[IDEMPOTENCY_HEADER],
                         summary="Queue a notification from a template"))
    @_documented(blp.response(202, SendResponse, example=examples.SEND_RESPONSE,
                              headers=REPLAYED))
    @_errors(400, 401, 403, 404, 409, 413, 422, 429, 500, 503)
    def post(self):
        return _flask_answer(send_answer(_flask_call()))


@blp.route("/notifications/preview")
class Preview(ApiView):
    @_documented(blp.doc(operationId="previewNotification", security=SECURITY,
                         requestBody=REQUEST_BODY,
                         summary="Render an email template without delivering it"))
    @_documented(blp.response(200, PreviewResponse, example=examples.PREVIEW_RESPONSE))
    @_errors(400, 401, 403, 404, 413, 429, 500, 503, operation="preview")
    def post(self):
        return _flask_answer(preview_answer(_flask_call()))


@blp.route("/api-keys/validate")
class Validate(ApiView):
    @_documented(blp.doc(operationId="validateApiKey", security=SECURITY,
                         summary="Check an API key without sending anything"))
    @_documented(blp.response(200, ApiKeyValidationResponse,
                              example=examples.VALIDATE_RESPONSE))
    @_errors(401, 429, 500, 503, operation="validate",
             path="/api/v1/api-keys/validate")
    def get(self):
        environ = request.environ
        return _json(sending.validate_key(environ.get("HTTP_X_API_KEY"),
                                          environ.get("REMOTE_ADDR") or ""), 200)
