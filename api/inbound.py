"""Provider webhooks in: Postmark (the workspace's current secret, basic auth or ?token=)
and Twilio status callbacks (X-Twilio-Signature). A forged call is refused and records
nothing; a call about a message Herald does not know is acknowledged and records nothing
(docs/reports.md)."""

from __future__ import annotations

import uuid

from flask import Blueprint, Response, jsonify, request

from api import problems
from engine import runtime
from engine.inbound import postmark, twilio
from engine.inbound.recording import record_provider_report
from engine.store.models import Workspace

blueprint = Blueprint("inbound", __name__)
MAX_BODY_BYTES = 1024 * 1024


def _too_large() -> bool:
    return request.content_length is not None and request.content_length > MAX_BODY_BYTES


@blueprint.post("/api/inbound/postmark/<workspace_id>")
def postmark_webhook(workspace_id: str):
    auth = request.authorization
    password = (auth.password if auth is not None and auth.type == "basic" else None) or \
        request.args.get("token")
    if not password:
        return problems.problem(401, "Postmark webhooks carry the workspace's secret as basic "
                                "auth.", headers={"WWW-Authenticate": 'Basic realm="herald"'})
    try:
        ident = uuid.UUID(workspace_id)
    except ValueError:
        ident = None
    found = Workspace.get_or_none(Workspace.id == ident) if ident is not None else None
    if found is None or not postmark.authentic(found, password):
        return problems.problem(403, "The secret does not match this workspace.")
    if _too_large():
        return problems.bare(413)
    payload = request.get_json(silent=True)
    if not isinstance(payload, dict):
        return problems.problem(400, "The body is not a JSON object.")
    found = postmark.read(payload)
    recorded = found is not None and record_provider_report(*found, workspace_id=ident)
    return jsonify({"recorded": bool(recorded)})


@blueprint.post("/api/inbound/twilio")
def twilio_callback():
    if _too_large():
        return problems.bare(413)
    params = list(request.form.items(multi=True))
    query = request.query_string.decode("latin-1")
    called = runtime.settings().public_url.rstrip("/") + request.path + \
        (f"?{query}" if query else "")
    if not twilio.authentic([called, request.url], params,
                            request.headers.get("X-Twilio-Signature")):
        return problems.problem(403, "X-Twilio-Signature does not sign this request.")
    found = twilio.read(dict(params))
    if found is not None:
        record_provider_report(*found)
    return Response(status=204)
