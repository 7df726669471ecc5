"""Callbacks (Owner or Admin): the workspace's callback URL, checked as a webhook destination
(spec 6.1) where it is set, its switch for opens and clicks, a test event, the recent
callbacks with their answer codes and next retries (all, or the failed ones), and a replay
of a failed one (docs/callbacks.md). Views over engine/callbacks/.

A test event and a replay wait on the receiver an Admin chose: they run off the request
thread (web/settings/background_tests.py), and the page polls for the answer."""

from __future__ import annotations

from typing import Any

from flask import abort, flash, g, redirect, render_template, request, url_for
from flask_login import current_user

from engine import runtime
from engine.callbacks import manual, targets
from engine.callbacks.sending import FAILED, Sent
from engine.database.models import Workspace
from engine.database.models.callbacks import Callback
from engine.people import audit
from web.permissions import workspace_view
from web.settings.background_tests import Busy, callback_tests
from web.settings.blueprint import blueprint
from web.settings.forms import CallbackForm, mark
from web.settings.pages import settings_page
from web.settings.provider import shown

SHOWN = {"all": "All attempts", FAILED: "Failed attempts"}


def _shown() -> str:
    wanted = request.args.get("show", "all")
    return wanted if wanted in SHOWN else "all"


def _attempts(show: str) -> list[Callback]:
    return manual.recent(g.workspace, failed_only=show == FAILED)


def _page(form: CallbackForm | None = None, status: int = 200,
          answer: dict[str, Any] | None = None, problem: str | None = None):
    if form is None:
        form = CallbackForm(formdata=None)
        form.callback_url.data = g.workspace.callback_url or ""
        form.tracking.data = g.workspace.callback_tracking is not False
    show = _shown()
    return render_template("settings/callbacks.html", page="Callbacks", form=form,
                           current=g.workspace.callback_url, show=show, shows=SHOWN,
                           callbacks=_attempts(show), answer=answer, problem=problem,
                           loopback=runtime.settings().webhook_allow_private), status


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


def _told(callback: Callback, sent: Sent, what: str) -> dict[str, Any]:
    code = f" (answer {callback.status_code})" if callback.status_code else ""
    if sent.status == "delivered":
        return {"ok": True, "text": f"{what}: delivered{code}."}
    return {"ok": False, "text": f"{what}: {sent.status}{code}: {callback.error}."}


def _started(work) -> tuple[Any, int]:
    try:
        token = callback_tests.start(str(g.workspace.id), work)
    except Busy as err:
        return _page(status=429, problem=str(err))
    return _page(answer={"pending": True, "token": token})


@blueprint.post("/callbacks/test")
@workspace_view("admin")
def test_callback():
    if not g.workspace.callback_url:
        flash("Save a callback URL first.", "warn")
        return _back()
    workspace, user = g.workspace, current_user.user

    def work() -> dict[str, Any]:
        # The row is made here, at the attempt: a pending row waiting for this thread
        # would be due for the callbacks job too, and sent twice.
        callback, sent = manual.send_test(Workspace.get_by_id(workspace.id))
        audit.record(workspace, user, "callback.tested", "", {"status": sent.status})
        return _told(callback, sent, "Test event")

    return _started(work)


@blueprint.post("/callbacks/<int:callback_id>/replay")
@workspace_view("admin")
def replay_callback(callback_id: int):
    if manual.failed(g.workspace, callback_id) is None:
        abort(404)  # another workspace's, or not failed
    workspace, user = g.workspace, current_user.user

    def work() -> dict[str, Any]:
        replayed = manual.replay(workspace, callback_id)
        if replayed is None:  # replayed by someone else meanwhile
            return {"ok": False, "text": "Replay: that callback is no longer failed."}
        callback, sent = replayed
        audit.record(workspace, user, "callback.replayed", callback.delivery_id)
        return _told(callback, sent, "Replay")

    return _started(work)


@blueprint.get("/callbacks/test/<token>")
@workspace_view("admin")
def callback_test_answer(token: str):
    """The answer of a test or replay started on this page (htmx polls it until it has
    one); with the answer, the attempts table again (out of band)."""
    known, answer = callback_tests.answer(str(g.workspace.id), token)
    if not known:
        answer = {"ok": False, "text": "This answer is no longer kept: send another."}
    show = _shown()
    return render_template("settings/_callback_answer.html", workspace=g.workspace,
                           answer=answer or {"pending": True, "token": token}, show=show,
                           callbacks=_attempts(show) if answer else None)

