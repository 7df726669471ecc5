"""The suppression list: search (by address and scope), add, remove, CSV import and export
(engine/catalog/suppressions.py, the writer bounces and `herald apply` use). Delivery reads
the list at each attempt, and every process's next preview names a change. Each row
shows its scope: all mail, or Marketing email only."""

from __future__ import annotations

from flask import Response, abort, flash, g, redirect, render_template, request, url_for
from flask_login import current_user

from engine.catalog import suppressions as suppression_list
from engine.catalog import topics as topic_list
from engine.database.db import database
from engine.database.models import Suppression
from engine.database.vocabulary import topic_scope
from engine.people import audit, users
from engine.people.errors import PeopleError
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.csv_files import SCOPES, CsvRefused, read_rows, write_rows
from web.settings.forms import ImportForm, SuppressionForm, mark
from web.settings.pages import settings_page

SHOWN = 200


def _page(form: SuppressionForm | None = None, import_form: ImportForm | None = None,
          status: int = 200):
    query = (request.args.get("q") or "").strip()[:320]
    scopes = _scopes()
    scope = request.args.get("scope") if request.args.get("scope") in scopes else ""
    shown, total = suppression_list.search(g.workspace, query, scope, SHOWN)
    return render_template("settings/suppressions.html", page="Suppressions",
                           form=form or _form(formdata=None), scopes=scopes,
                           import_form=import_form or ImportForm(formdata=None),
                           rows=shown, total=total, query=query, scope=scope,
                           limit=SHOWN), status


def _scopes() -> list[str]:
    """Every scope a row of this workspace may have: all, marketing, each topic's."""
    return [*SCOPES, *(topic_scope(name) for name in topic_list.names(g.workspace.id))]


def _form(**kwargs) -> SuppressionForm:
    """The form, its scopes the workspace's (docs/delivery.md, "Suppression scope")."""
    form = SuppressionForm(**kwargs)
    form.scope.choices = [*form.scope.choices,
                          *((s, f"Topic {s.removeprefix('topic:')} only")
                            for s in _scopes()[len(SCOPES):])]
    return form


@blueprint.get("/suppressions")
@settings_page("suppressions")
def suppressions():
    return _page()


@blueprint.post("/suppressions")
@workspace_view("admin")
def add_suppression():
    form = _form()
    try:
        address = users.normalize_email(form.address.data or "", "address")
    except PeopleError as err:
        mark(form.address, err.message)
        return _page(form, status=400)
    if not form.scope.validate(form):
        return _page(form, status=400)
    scope = form.scope.data
    if suppression_list.add(g.workspace.id, [address], "manual", scope):
        audit.record(g.workspace, current_user.user, "suppression.added", address,
                     {"scope": scope})
        stopped = ("Marketing email" if scope == "marketing" else "message" if scope == "all"
                   else f"Marketing email of the topic {scope.removeprefix('topic:')}")
        flash(f"{address} is suppressed: no {stopped} goes to it from now on.", "info")
    else:
        flash(f"{address} was already on the list.", "info")
    return redirect(url_for("settings.suppressions", workspace_id=g.workspace.id))


def _row(suppression_id) -> Suppression:
    row = suppression_list.find(g.workspace, suppression_id)
    if row is None:
        abort(404)
    return row


@blueprint.get("/suppressions/<uuid:suppression_id>/remove")
@workspace_view("admin")
def confirm_remove_suppression(suppression_id):
    return render_template("settings/suppression_remove.html", page="Suppressions",
                           row=_row(suppression_id))


@blueprint.post("/suppressions/<uuid:suppression_id>/remove")
@workspace_view("admin")
def remove_suppression(suppression_id):
    row = _row(suppression_id)
    suppression_list.remove_row(g.workspace.id, row.id)  # its other scopes stay
    audit.record(g.workspace, current_user.user, "suppression.removed", row.address,
                 {"reason": row.reason, "scope": row.scope})
    flash(f"{row.address} is no longer suppressed.", "info")
    return redirect(url_for("settings.suppressions", workspace_id=g.workspace.id))


@blueprint.post("/suppressions/import")
@workspace_view("admin")
def import_suppressions():
    form = ImportForm()
    upload = form.csv_file.data
    if not upload or not getattr(upload, "filename", ""):
        mark(form.csv_file, "Choose a CSV file to import.")
        return _page(import_form=form, status=400)
    try:
        rows = read_rows(upload.stream)
    except CsvRefused as err:
        mark(form.csv_file, str(err))
        return _page(import_form=form, status=400)
    with database.atomic():
        created = sum(suppression_list.add(g.workspace.id,
                                           [a for a, s in rows if s == scope], "manual", scope)
                      for scope in sorted({s for _, s in rows}))
        audit.record(g.workspace, current_user.user, "suppression.imported",
                     upload.filename[:200], {"rows": len(rows), "added": created})
    flash(f"Imported {len(rows)} address(es): {created} added, "
          f"{len(rows) - created} already on the list.", "info")
    return redirect(url_for("settings.suppressions", workspace_id=g.workspace.id))


@blueprint.get("/suppressions/export.csv")
@workspace_view("admin")
def export_suppressions():
    rows = suppression_list.every(g.workspace)
    # The scope last: a reader of the older three columns still finds them where they were.
    body = "".join(write_rows(("address", "reason", "createdAt", "scope"),
                      ((r.address, r.reason, r.created_at.isoformat(timespec="seconds") + "Z",
                        r.scope) for r in rows)))
    return Response(body, mimetype="text/csv", headers={
        "Content-Disposition": 'attachment; filename="suppressions.csv"',
        "Cache-Control": "no-store"})
