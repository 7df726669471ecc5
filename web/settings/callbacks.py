"""Callbacks (Owner or Admin): the workspace's callback URL, checked as a webhook destination
(spec 6.1) where it is set, its switch for opens and clicks, a test event, the recent
callbacks with their answer codes and next retries, and a replay of a failed one
(docs/callbacks.md). Views over engine/callbacks/."""

from __future__ import annotations

from flask import abort, flash, g, redirect, render_template, url_for
from flask_login import current_user

from engine.callbacks import manual, targets
from engine.callbacks.sending import Sent
from engine.people import audit
from engine.store.callback_models import Callback
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.forms import CallbackForm, mark
from web.settings.pages import settings_page
from web.settings.provider import shown


def _page(form: CallbackForm | None = None, status: int = 200):
    if form is None:
        form = CallbackForm(formdata=None)
        form.callback_url.data = g.workspace.callback_url or ""
        form.tracking.data = g.workspace.callback_tracking is not False
    return render_template("settings/callbacks.html", page="Callbacks", form=form,
                           current=g.workspace.callback_url,
                           callbacks=manual.recent(g.workspace)), status


def _back():
    return redirect(url_for("settings.callbacks", workspace_id=g.workspace.id))


@blueprint.get("/callbacks")
@settings_page("callbacks")
def callbacks():
    return _page()


@blueprint.post("/callbacks")
@workspace_view("admin")
def save_callback():
    form = CallbackForm()
    try:
        url = targets.set_target(g.workspace, form.callback_url.data or "",
                                 tracking=bool(form.tracking.data))
    except targets.CallbackUrlError as err:
        mark(form.callback_url, str(err))
        return _page(form, status=400)
    # Scheme and host only: a receiver's path or query may carry a token of its own.
    audit.record(g.workspace, current_user.user, "callback_url.changed", shown(url) or "")
    flash(f"Saved: outcomes are called back to {url}.", "info")
    return _back()


@blueprint.post("/callbacks/remove")
@workspace_view("admin")
def remove_callback():
    if g.workspace.callback_url:
        targets.remove_target(g.workspace)
        audit.record(g.workspace, current_user.user, "callback_url.removed")
    flash("No more callbacks: pending ones fail at their next attempt.", "info")
    return _back()


def _told(callback: Callback, sent: Sent, what: str) -> None:
    code = f" (answer {callback.status_code})" if callback.status_code else ""
    if sent.status == "delivered":
        flash(f"{what}: delivered{code}.", "info")
    else:
        flash(f"{what}: {sent.status}{code}: {callback.error}.", "warn")


@blueprint.post("/callbacks/test")
@workspace_view("admin")
def test_callback():
    if not g.workspace.callback_url:
        flash("Save a callback URL first.", "warn")
        return _back()
    callback, sent = manual.send_test(g.workspace)
    audit.record(g.workspace, current_user.user, "callback.tested", "",
                 {"status": sent.status})
    _told(callback, sent, "Test event")
    return _back()


@blueprint.post("/callbacks/<int:callback_id>/replay")
@workspace_view("admin")
def replay_callback(callback_id: int):
    replayed = manual.replay(g.workspace, callback_id)
    if replayed is None:
        abort(404)  # another workspace's, or not failed
    callback, sent = replayed
    audit.record(g.workspace, current_user.user, "callback.replayed", callback.delivery_id)
    _told(callback, sent, "Replay")
    return _back()
