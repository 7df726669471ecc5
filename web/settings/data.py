"""Data (Owner or Admin): how long the workspace's notifications keep their recipients and
content, and the erasure of one recipient (docs/operations.md, "Data retention"). Views
over engine/retention/."""

from __future__ import annotations

from flask import flash, g, redirect, render_template, url_for
from flask_login import current_user

from engine.people import audit
from engine.retention import erasure, policy
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.forms import EraseForm, RetentionForm, mark
from web.settings.pages import settings_page


def _page(form: RetentionForm | None = None, erase: EraseForm | None = None,
          status: int = 200):
    if form is None:
        form = RetentionForm(formdata=None)
        days = g.workspace.retention_days
        form.retention_days.data = "" if days is None else str(days)
    return render_template("settings/data.html", page="Data", form=form,
                           erase=erase or EraseForm(formdata=None),
                           days=g.workspace.retention_days, limits=(policy.MIN_DAYS,
                                                                    policy.MAX_DAYS)), status


def _back():
    return redirect(url_for("settings.data", workspace_id=g.workspace.id))


@blueprint.get("/data")
@settings_page("data")
def data():
    return _page()


@blueprint.post("/data/retention")
@workspace_view("admin")
def save_retention():
    form = RetentionForm()
    try:
        days = policy.parse_days(form.retention_days.data)
    except policy.RetentionError as err:
        mark(form.retention_days, f"Enter {err}.")
        return _page(form, status=400)
    before = g.workspace.retention_days
    policy.set_days(g.workspace.id, days)
    audit.record(g.workspace, current_user.user, "retention.changed", f"{days} days",
                 {"before": before, "after": days})
    flash(f"Saved: notifications keep their recipients and content {days} days.", "info")
    return _back()


@blueprint.post("/data/erase")
@workspace_view("admin")
def confirm_erase():
    """The confirmation: what will go, and the button that repeats the action's name."""
    form = EraseForm()
    try:
        erasure.check(form.recipient.data or "")
    except erasure.ErasureError as err:
        mark(form.recipient, f"Enter {err}.")
        return _page(erase=form, status=400)
    return render_template("settings/data_erase.html", page="Data", form=form)


@blueprint.post("/data/erase/confirmed")
@workspace_view("admin")
def erase_recipient():
    form = EraseForm()
    try:
        done = erasure.erase(g.workspace.id, form.recipient.data or "", current_user.user)
    except erasure.ErasureError as err:
        mark(form.recipient, f"Enter {err}.")
        return _page(erase=form, status=400)
    waiting = (f" {done['waiting']} still to deliver go once finished."
               if done["waiting"] else "")
    flash(f"Erased: {done['notifications']} notifications purged, {done['listRows']} list "
          f"rows removed, {done['suppressionsKept']} suppression kept as a keyed hash."
          + waiting, "info")
    return _back()
