"""Provider events in, one route for every provider: /api/inbound/<name> and
/api/inbound/<name>/<workspace id> serve the receiver a provider plugin registered
(``register_event_webhooks``; Postmark's and Twilio's live beside their plugins). A forged
call is refused and records nothing; a call about a message Herald does not know is
acknowledged and records nothing (docs/reports.md)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, abort, jsonify, request

from api import problems
from engine import runtime
from engine.inbound import receiving
from engine.plugins.event_contract import EventWebhook, InboundRefused

blueprint = Blueprint("inbound", __name__)
MAX_BODY_BYTES = 1024 * 1024


class FlaskCall:
    """The request, as a receiver reads it (engine/plugins/event_contract.py InboundCall)."""

    def __init__(self, provider: str, workspace_id: str | None) -> None:
        self.provider = provider
        self.workspace_id = workspace_id
        self.headers: Mapping[str, str] = request.headers
        self.args: Mapping[str, str] = request.args
        query = request.query_string.decode("latin-1")
        called = runtime.settings().public_url.rstrip("/") + request.path + \
            (f"?{query}" if query else "")
        self.urls = [called, request.url]

    def basic_password(self) -> str | None:
        return _basic_password()

    @staticmethod
    def _bounded() -> None:
        if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
            raise _TooLarge()

    def json(self) -> Any:
        self._bounded()
        return request.get_json(silent=True)

    def form(self) -> list[tuple[str, str]]:
        self._bounded()
        return list(request.form.items(multi=True))

    def workspace_secret_matches(self, password: str) -> bool:
        return receiving.workspace_secret_matches(self.workspace_id, self.provider, password)

    def provider_urls(self, scheme: str) -> list[str]:
        return receiving.configured_provider_urls(scheme)


def _basic_password() -> str | None:
    auth = request.authorization
    return auth.password if auth is not None and auth.type == "basic" else None


class _TooLarge(Exception):
    """The body is over MAX_BODY_BYTES: 413, nothing read."""


@blueprint.post("/api/inbound/<name>")
def provider_events(name: str):
    return _receive(name, receiving.receiver(name, per_workspace=False), None)


@blueprint.post("/api/inbound/<name>/<workspace_id>")
def workspace_provider_events(name: str, workspace_id: str):
    return _receive(name, receiving.receiver(name, per_workspace=True), workspace_id)


def _receive(name: str, receiver: EventWebhook | None, workspace_id: str | None):
    if receiver is None:
        abort(404)
    if workspace_id is not None and (refused := _unauthenticated(name, workspace_id)):
        return refused
    try:
        events = receiver.events(FlaskCall(name, workspace_id))
    except InboundRefused as refused:
        return problems.problem(refused.status, refused.detail, headers=refused.headers or None)
    except _TooLarge:
        return problems.bare(413)
    ident = None
    if workspace_id is not None:
        try:
            ident = uuid.UUID(workspace_id)
        except ValueError:
            abort(404)
    recorded = receiving.record(events, workspace_id=ident) if events else False
    # A HELP is answered in the response when the receiver can say how (Twilio's TwiML).
    answers = receiving.replies(events) if events else []
    answer = getattr(receiver, "answer", None)
    if answers and answer is not None:
        text, content_type = answer(answers[0])
        return Response(text, status=200, content_type=content_type)
    if receiver.acknowledgement == "empty":
        return Response(status=204)
    return jsonify({"recorded": bool(recorded)})


def _unauthenticated(name: str, workspace_id: str) -> Response | None:
    """Herald authenticates every call to a per-workspace receiver before the receiver
    reads a byte: the workspace's inbound secret for this provider, as basic auth or
    ``?token=`` (the URL `herald inbound url` prints carries it one way or the other).
    None when it matches; otherwise the refusal, and nothing is recorded."""
    password = _basic_password() or request.args.get("token")
    if not password:
        return problems.problem(401, "Calls for a workspace carry its inbound secret for "
                                     "this provider (basic auth or ?token=).",
                                headers={"WWW-Authenticate": 'Basic realm="herald"'})
    if not receiving.workspace_secret_matches(workspace_id, name, password):
        return problems.problem(403, "The secret does not match this workspace.")
    return None
