"""Send to a list (docs/web.md): on an email or SMS template's page, a recipients file is
uploaded and checked (every bad row named, nothing sent), then ``Send N notifications``
starts the list's job; the list's page shows its counts and can cancel it. Every member may
send to a list; the audit log records who sent which. Thin views over engine/lists/."""

from __future__ import annotations

from flask import abort, g, redirect, render_template, request, url_for

from engine.authoring import finding, previews
from engine.database.models import Template
from engine.database.models.lists import RecipientList
from engine.lists import (
    background,
    cancelling,
    excerpt,
    progress,
    reading,
    recovery,
    scheduling,
    sending,
    uploads,
)
from engine.lists.checking import Checked, Problem
from engine.lists.rows import recipient_column
from engine.people import audit
from web.authoring import frames, loading
from web.authoring.blueprint import blueprint
from web.permissions import workspace_view
from web.security import checks_csrf_itself, csrf

WAIT_SECONDS = 2.0  # how long an upload's request waits for its check before the page does


def _listable(template_id) -> Template:
    template = loading.authorable(loading.template(template_id))
    if recipient_column(template.channel) is None:
        abort(404)
    return template


def _marked(table: dict | None, problems: list[Problem]) -> dict | None:
    """The file's table as the page shows it: each cell with the ids of the problems that
    name it (the summary's items), and each row with those naming the whole row."""
    if not table:
        return None
    cells: dict[tuple[int, int | None], list[str]] = {}
    for index, problem in enumerate(problems):
        if problem.row is not None:
            cells.setdefault((problem.row, problem.column), []).append(f"list-problem-{index}")
    rows = [(number, [(value, cells.get((number, column), []))
                      for column, value in enumerate(values)],
             cells.get((number, None), []))
            for number, values in table.get("rows", [])]
    return {"header": table.get("header", []), "rows": rows,
            "more": int(table.get("more", 0))}


def _upload_page(template: Template, checked: Checked | None = None, status: int = 200):
    return render_template("authoring/list_upload.html", template=template, checked=checked,
                           table=_marked(checked.table, checked.problems) if checked else None,
                           column=recipient_column(template.channel),
                           max_rows=reading.MAX_ROWS,
                           max_mb=reading.MAX_FILE_BYTES // (1024 * 1024)), status


def _refused(template: Template, problem: object, status: int):
    checked = Checked(template.channel, recipient_column(template.channel))
    checked.add(Problem(None, str(problem)))
    return _upload_page(template, checked, status)


def _kept(template: Template, list_id) -> RecipientList:
    ident = loading.parse_uuid(list_id)
    kept = progress.summary(g.workspace, ident) if ident else None
    if kept is None or kept.template_id != template.id:
        abort(404)
    return kept


@blueprint.get("/templates/<template_id>/lists/new")
@workspace_view("member")
def new_list(template_id):
    return _upload_page(_listable(template_id))


@blueprint.post("/templates/<template_id>/lists")
@checks_csrf_itself
@workspace_view("member")
def upload_list(template_id):
    template = _listable(template_id)
    try:  # before the body is read: a refused upload is answered after its headers
        uploads.take_slot(g.workspace)
    except uploads.Busy as err:
        return _refused(template, err, 429)
    try:
        csrf.protect()  # reads the body (the form's token is in it), the slot held
        sent = request.files.get("recipients")
        if sent is None or not sent.filename:
            uploads.free_slot(g.workspace)
            return _refused(template, "Choose a file of recipients (CSV, .xlsx or .ods).", 400)
    except BaseException:
        uploads.free_slot(g.workspace)
        raise
    try:
        kept = uploads.begin(g.workspace, template, sent.filename, sent.stream,
                             loading.current_user_row().id)
    except reading.FileRefused as err:
        return _refused(template, err, 400)
    # A small file's check ends at once: its answer comes with this request. A large one
    # goes on in the pool, and its page says so until it ends.
    background.wait(str(kept.id), WAIT_SECONDS)
    fresh = uploads.find(g.workspace, kept.id)
    refused = uploads.refusal(fresh) if fresh is not None else None
    if refused is not None:
        fresh.delete_instance()
        return _upload_page(template, refused, 400)
    return redirect(url_for("authoring.list_page", workspace_id=g.workspace.id,
                            template_id=template.id, list_id=kept.id), 303)


def _first_row_preview(template: Template, kept: RecipientList):
    """(token, frame version, the full list, the rendered first message): the first row
    rendered into the sandboxed preview frame, as the editor's preview is."""
    full = uploads.find(g.workspace, kept.id)
    version = finding.version(template, kept.version_number)
    if version is None or full is None:
        abort(404)
    shown = previews.preview(g.workspace, template, dict(version.content),
                             uploads.tags_of(full))
    token = frames.new_token()
    return token, frames.stash(template, token, shown), full, shown


@blueprint.get("/templates/<template_id>/lists/<list_id>")
@workspace_view("member")
def list_page(template_id, list_id):
    template = _listable(template_id)
    kept = _kept(template, list_id)
    if request.headers.get("HX-Request") and kept.status != uploads.CHECKING and \
            request.headers.get("HX-Target") == "list-checking":
        return "", 200, {"HX-Refresh": "true"}  # the check ended: the whole page again
    refused = uploads.refusal(kept)
    if refused is not None:  # shown once: the file is not kept
        RecipientList.delete().where(RecipientList.id == kept.id).execute()
        return _upload_page(template, refused, 200)
    if kept.status == uploads.CHECKING:
        return render_template("authoring/list_checking.html", template=template, kept=kept)
    if kept.status == sending.CHECKED:
        token, frame_version, full, shown = _first_row_preview(template, kept)
        table = _marked(excerpt.of_kept(full.columns, full.rows, full.row_count), [])
        return render_template("authoring/list_check.html", template=template, kept=kept,
                               token=token, frame_version=frame_version,
                               first=full.rows[0][1], shown=shown, table=table,
                               problem=request.args.get("problem"))
    recovery.resume_if_lost(kept)  # a list whose job was lost goes on when looked at
    return render_template("authoring/list.html", template=template, kept=kept,
                           shown=progress.progress(kept))


@blueprint.post("/templates/<template_id>/lists/<list_id>/send")
@workspace_view("member")
def send_list(template_id, list_id):
    template = _listable(template_id)
    kept = _kept(template, list_id)
    try:
        started = sending.start(kept, loading.current_user_row().id)
    except sending.SendRefused as err:
        return redirect(url_for("authoring.list_page", workspace_id=g.workspace.id,
                                template_id=template.id, list_id=kept.id,
                                problem=str(err)), 303)
    if started:
        audit.record(g.workspace, loading.current_user_row(), "list.sent", kept.filename,
                     {"listId": str(kept.id), "templateId": str(template.id),
                      "rows": kept.row_count})
    return redirect(url_for("authoring.list_page", workspace_id=g.workspace.id,
                            template_id=template.id, list_id=kept.id), 303)


@blueprint.post("/templates/<template_id>/lists/<list_id>/cancel")
@workspace_view("member")
def cancel_list(template_id, list_id):
    template = _listable(template_id)
    kept = _kept(template, list_id)
    if cancelling.cancel(kept):
        audit.record(g.workspace, loading.current_user_row(), "list.cancelled", kept.filename,
                     {"listId": str(kept.id), "templateId": str(template.id)})
    return redirect(url_for("authoring.list_page", workspace_id=g.workspace.id,
                            template_id=template.id, list_id=kept.id), 303)


def _schedule_page(template: Template, kept: RecipientList, error: scheduling.ScheduleRefused
                   | None = None, when: str = "", zone: str = scheduling.DEFAULT_ZONE,
                   status: int = 200):
    return render_template("authoring/list_schedule.html", template=template, kept=kept,
                           error=error, when=when, zone=zone, zones=scheduling.zones(),
                           days=scheduling.MAX_AHEAD.days), status


@blueprint.get("/templates/<template_id>/lists/<list_id>/schedule")
@workspace_view("member")
def schedule_form(template_id, list_id):
    template = _listable(template_id)
    kept = _kept(template, list_id)
    if kept.status != sending.CHECKED:
        return _to_list(template, kept)
    return _schedule_page(template, kept)


@blueprint.post("/templates/<template_id>/lists/<list_id>/schedule")
@workspace_view("member")
def schedule_list(template_id, list_id):
    template = _listable(template_id)
    kept = _kept(template, list_id)
    when_text = request.form.get("when", "")[:40]
    zone_name = request.form.get("zone", "")[:64]
    try:
        when = scheduling.parse(when_text, zone_name)
    except scheduling.ScheduleRefused as err:
        return _schedule_page(template, kept, err, when_text, zone_name, 400)
    if scheduling.schedule(kept, when, zone_name, loading.current_user_row().id):
        audit.record(g.workspace, loading.current_user_row(), "list.scheduled", kept.filename,
                     {"listId": str(kept.id), "templateId": str(template.id),
                      "rows": kept.row_count, "at": when.isoformat() + "Z",
                      "timeZone": zone_name})
    return _to_list(template, kept)


@blueprint.post("/templates/<template_id>/lists/<list_id>/unschedule")
@workspace_view("member")
def unschedule_list(template_id, list_id):
    template = _listable(template_id)
    kept = _kept(template, list_id)
    if scheduling.unschedule(kept):
        audit.record(g.workspace, loading.current_user_row(), "list.unscheduled",
                     kept.filename, {"listId": str(kept.id), "templateId": str(template.id)})
    return _to_list(template, kept)


def _to_list(template: Template, kept: RecipientList):
    return redirect(url_for("authoring.list_page", workspace_id=g.workspace.id,
                            template_id=template.id, list_id=kept.id), 303)
