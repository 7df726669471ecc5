"""Endpoints behind the signed tracking URLs: open pixel, click redirect, RFC 8058 one-click
unsubscribe (the link's page is the recipient's preferences: web/preferences.py)."""

from __future__ import annotations

import base64
import time
import uuid

from flask import Blueprint, Response, abort, redirect, render_template_string, request

from engine.callbacks import recording as callbacks
from engine.database.models import Notification, TrackingEvent
from engine.database.secrets import recipient_hash
from engine.database.vocabulary import purged_at
from engine.delivery import tracking_guard
from engine.delivery.tracking import link_target, read_token
from engine.inbound import preferences
from engine.reports import events as report_events

blueprint = Blueprint("tracking", __name__)
PIXEL = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
UNSUBSCRIBED_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Unsubscribed</title></head><body><main><h1>Unsubscribed</h1>
<p>{{ address }} is unsubscribed from {{ what }}.</p>
<p>Messages about your account, such as password resets, still arrive.</p></main></body></html>"""


def _notification(data: dict | None) -> Notification | None:
    """The notification a token names, or None: a preview's tokens name none ("preview")."""
    if not data or not isinstance(data.get("n"), str):
        return None
    try:
        # Parsed here: peewee passes a string that is no UUID on as it is, which PostgreSQL
        # refuses with an error of its own (a 500) instead of finding no row.
        notification_id = uuid.UUID(data["n"])
    except ValueError:
        return None
    return Notification.get_or_none(Notification.id == notification_id)


def _record(kind: str, data: dict, url: str | None = None) -> None:
    notification = _notification(data)
    if notification is None:
        return
    if purged_at(notification.payload):
        # Past its retention (or erased): counted, but nothing that names anyone is
        # written again, and no callback carries it (docs/operations.md, "Data retention").
        with report_events.changing(notification):
            TrackingEvent.create(notification=notification, kind=kind,
                                 recipient=recipient_hash(str(data["r"])) if data.get("r")
                                 else None, url=None)
        return
    with report_events.changing(notification):  # its day's rollup follows (reports)
        TrackingEvent.create(notification=notification, kind=kind,
                             recipient=data.get("r"), url=url)
    callbacks.tracked(notification, kind, data.get("r"), url)  # committed: called back


def _guard(kind: str, token: str, seen: tuple[object, ...] | None = None) -> int:
    """tracking_guard's verdict for this request; 429 (abort) when over a rate limit."""
    verdict = tracking_guard.admit(kind, token, request.remote_addr or "", seen)
    if verdict == tracking_guard.LIMITED:
        abort(Response("Too many requests.\n", status=429, mimetype="text/plain",
                       headers={"Retry-After": str(60 - int(time.time() % 60))}))
    return verdict


@blueprint.get("/t/o/<token>")
def opened(token: str):
    data = read_token("open", token)
    seen = (data.get("n"), data.get("r")) if data is not None else None
    if _guard("open", token, seen) == tracking_guard.RECORD and data is not None:
        _record("open", data)
    # Always the pixel: a forged token learns nothing, and mail clients show no broken image.
    return Response(PIXEL, mimetype="image/gif", headers={"Cache-Control": "no-store"})


@blueprint.get("/t/c/<token>")
def clicked(token: str):
    data = read_token("click", token)
    url = data.get("u") if data else None
    if isinstance(url, str):
        url = link_target(url)  # a link signed before links were read as browsers do
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        abort(404)
    # Only the worker signs a click with a real notification id, over that notification's own
    # HTML, so one that exists sent this link. A preview signs any link it is given, and
    # redirecting for it (or for a deleted notification) would be an open redirect.
    notification = _notification(data)
    if notification is None:
        abort(404)
    if _guard("click", token, (notification.id, data.get("r"), url)) == tracking_guard.RECORD:
        _record("click", data, url)
    return redirect(url, code=302)


@blueprint.post("/t/u/<token>")
def unsubscribe(token: str):
    """RFC 8058's one-click POST: the message's topic, or all Marketing email for a message
    of none. The link's GET is the preferences page (web/preferences.py), which changes
    nothing by itself (link scanners)."""
    _guard("unsubscribe", token)
    link = preferences.read_link(token)
    if link is None:
        abort(404)
    # Only Marketing mail carries the link: it never stops a password reset (a row already
    # suppressing all mail stays so).
    scope = preferences.one_click(link)
    return render_template_string(UNSUBSCRIBED_PAGE, address=link.recipient,
                                  what=preferences.describe(scope))
