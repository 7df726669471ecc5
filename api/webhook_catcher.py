"""The dev inbox's webhook catcher: a URL a webhook template can target in development.

``POST /dev/inbox/webhooks/<name>`` keeps the request (engine/webhooks/caught.py) and
answers 200, so the delivery counts as delivered; ``GET`` lists what arrived, as JSON; the
dev inbox page shows each with its headers, body and whether its signature verifies.
Registered with the dev inbox: never in production.
"""

from __future__ import annotations

import re

from flask import Blueprint, abort, g, jsonify, request

from api.framing import refuse_foreign_host
from engine.catalog.keys import iso
from engine.database.models.inbox import CaughtWebhook
from engine.webhooks import caught

blueprint = Blueprint("webhook_catcher", __name__)
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


@blueprint.before_request
def _reads_only_on_loopback():
    """Every tenant's caught webhooks, unauthenticated: read or emptied only with a loopback
    Host, as the dev inbox (a page whose DNS name rebinds to 127.0.0.1 gets 403). A POST
    discloses nothing and may come from a delivery to any name for this machine."""
    if request.method != "POST":
        return refuse_foreign_host()
    return None


def _name(name: str) -> str:
    if not _NAME.fullmatch(name):
        abort(404)
    return name


def _as_json(kept: CaughtWebhook) -> dict:
    return {"id": kept.id, "name": kept.name, "headers": kept.headers, "body": kept.body,
            "sizeBytes": kept.size_bytes, "deliveryId": kept.delivery_id,
            "workspaceId": kept.workspace_id, "notificationId": kept.notification_id,
            "signatureVerified": kept.verified, "verdict": kept.verdict,
            "createdAt": iso(kept.created_at)}


@blueprint.post("/dev/inbox/webhooks/<name>")
def catch(name: str):
    # The raw bytes, before any parsing: a signature covers them exactly (spec 6.4).
    raw = g.get("raw_body")  # a chunked body, already read by the gateway check
    if raw is None:
        raw = request.get_data(cache=False)
    kept = caught.catch(_name(name), dict(request.headers), raw)
    return jsonify({"received": True, "id": kept.id, "signatureVerified": kept.verified,
                    "verdict": kept.verdict})


@blueprint.get("/dev/inbox/webhooks/<name>")
def named(name: str):
    return jsonify([_as_json(c) for c in caught.latest(_name(name))])


@blueprint.get("/dev/inbox/webhooks")
def every():
    return jsonify([_as_json(c) for c in caught.latest()])


@blueprint.delete("/dev/inbox/webhooks")
def clear():
    return jsonify({"deleted": caught.clear()})
