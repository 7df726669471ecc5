"""The preview frame: the rendered template as its own document, never inlined in a page.

The editor's page shows it in ``<iframe sandbox>`` (no allow-scripts, no allow-same-origin);
the document itself is served with a CSP whose ``sandbox`` directive does the same even when
it is opened on its own: no script runs and it has no origin, so no cookie, no storage and
no request to Herald carries the session. Images and styles of the email load as a mail
client would load them; nothing else does.

A preview's document is stashed in Redis by the request that rendered it (the editor's
text, unsaved), under the signed-in person and the editor page that asked, for
STASH_SECONDS; the frame's request reads it. One key per open editor, overwritten at each
preview: memory stays bounded by the editors open, not by keystrokes.
"""

from __future__ import annotations

import re
import secrets

from flask import Blueprint, Response, abort, g
from flask_login import current_user

from engine import runtime
from engine.authoring import drafts, previews, samples
from engine.authoring.previews import EditorPreview
from engine.database.models import Template
from engine.queue import redis_scripts
from web.authoring import loading
from web.core import errors
from web.permissions import workspace_view

blueprint = Blueprint("preview_frames", __name__, url_prefix="/w/<uuid:workspace_id>")
errors.register(blueprint)

STASH_SECONDS = 1800
TOKEN = re.compile(r"[A-Za-z0-9_-]{16,32}")
FRAME_POLICY = "; ".join((
    "default-src 'none'",
    "img-src https: http: data:",
    "style-src 'unsafe-inline' https:",
    "font-src https: data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
    "sandbox",
))


def new_token() -> str:
    """Names one open editor page (its previews' stash)."""
    return secrets.token_urlsafe(12)


def _key(token: str) -> str:
    return f"herald:web:preview:{current_user.id}:{token}"


def stash(template: Template, token: str, preview: EditorPreview) -> str:
    """Keep the preview's document for the frame; returns a cache-busting version."""
    if not TOKEN.fullmatch(token or ""):
        abort(400)
    media, body = preview.frame()
    # The document as it is, after one line naming its template and type: no JSON to
    # escape 50 KB into and out of.
    head = f"{template.id} {media}\n".encode()
    # On the thread's own connection, as the preview's other round trip (web/throttle.py).
    redis_scripts.commands(runtime.redis(), ("SET", _key(token), head + body.encode("utf-8"),
                                             "EX", STASH_SECONDS))
    return secrets.token_hex(4)


def _saved_preview(template: Template) -> EditorPreview:
    """When the stash has gone (expired, Redis restarted): the saved text, as the editor
    would show it after a reload."""
    return previews.preview(g.workspace, template, drafts.editable(template).content,
                            samples.remembered(template))


@blueprint.get("/templates/<template_id>/preview/<token>")
@workspace_view("member")
def frame(template_id, token):
    template = loading.template(template_id)
    if not TOKEN.fullmatch(token):
        abort(404)
    head, _, document = (runtime.redis().get(_key(token)) or b"").partition(b"\n")
    stashed_for, _, media = head.decode("ascii", "replace").partition(" ")
    if stashed_for == str(template.id) and media in ("text/html", "text/plain"):
        body = document.decode("utf-8")
    else:
        media, body = _saved_preview(template).frame()
    return framed(body, media)


def framed(body: str, media: str) -> Response:
    """A document for a sandboxed frame (the editor's preview, a notification's message):
    sandboxed by its own CSP even when opened alone."""
    g.sandboxed_frame = True  # web/security.py leaves its headers as they are
    response = Response(body, mimetype=media)
    if media == "text/plain":
        response.charset = "utf-8"
    response.headers.update({
        "Content-Security-Policy": FRAME_POLICY,
        "X-Frame-Options": "SAMEORIGIN",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
        "Cross-Origin-Resource-Policy": "same-origin",
    })
    return response
