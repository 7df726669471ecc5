"""Reports: counts and the feed under filters, the CSV export, a notification's page."""

from __future__ import annotations

import re
import uuid

from flask import Blueprint, Response, abort, g, render_template, request, stream_with_context

from engine.database.models.lists import RecipientList
from engine.lists import progress
from engine.plugins.manager import default_registry
from engine.reports import counts, export, feed, filters, inbound, timeline
from web.authoring.frames import framed
from web.core import errors
from web.permissions import workspace_view
from web.reports import chart

blueprint = Blueprint("reports", __name__, template_folder="templates",
                      url_prefix="/w/<uuid:workspace_id>/reports")
errors.register(blueprint)
FILTERS = ("from", "to", "template", "channel", "status", "recipient", "correlationId",
           "list", "inbound")


def _values() -> dict[str, str]:
    return {name: request.args.get(name, "") for name in FILTERS}


@blueprint.get("/")
@workspace_view("member")
def index():
    values = _values()
    channels = export.known_channels(g.workspace.id)
    choices = {"templates": export.known_templates(g.workspace.id), "channels": channels,
               "statuses": filters.STATUSES, "lists": progress.sent_lists(g.workspace)}
    try:
        chosen = filters.parse(g.workspace.id, values)
        page = feed.feed(chosen, request.args.get("cursor") or None)
    except filters.FilterError as err:
        return render_template("reports/index.html", section="reports", values=values,
                               problem=err, report=None, page=None, chart=None,
                               **choices), 400
    if values["inbound"]:  # the messages people sent in, instead of the notifications
        received, total = inbound.messages(chosen)
        return render_template("reports/index.html", section="reports", values=values,
                               problem=None, report=None, page=None, chosen=chosen,
                               inbound=received, inbound_total=total,
                               inbound_shown=inbound.SHOWN, **choices)
    report = counts.counts(chosen)
    return render_template("reports/index.html", section="reports", values=values,
                           problem=None, report=report, page=page, labels=counts.LABELS,
                           chart=chart.by_day(report.by_day), chosen=chosen, **choices)


@blueprint.get("/export.csv")
@workspace_view("member")
def export_csv():
    try:
        chosen = filters.parse(g.workspace.id, _values())
    except filters.FilterError as err:
        abort(400, description=str(err))
    name = f"notifications-{chosen.start.isoformat()}-{chosen.end.isoformat()}.csv"
    return Response(stream_with_context(export.export_csv(chosen)), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{name}"',
                             "Cache-Control": "no-store"})


@blueprint.get("/notifications/<ident>")
@workspace_view("member")
def notification(ident: str):
    found = timeline.timeline(g.workspace.id, ident)
    if found is None:
        abort(404)
    return render_template("reports/notification.html", section="reports", found=found,
                           from_list=_list_of(found.notification.correlation_id),
                           mail=_reads_as_mail(found.notification.channel))


def _reads_as_mail(channel: str) -> bool:
    """Whether the channel's messages read as email (its ``previewable``: a subject, the
    HTML as sent, the plain text); any other shows its text or body."""
    try:
        return bool(default_registry().channel(channel).previewable)
    except LookupError:  # a channel no longer installed: its text, as stored
        return False


@blueprint.get("/notifications/<ident>/message")
@workspace_view("member")
def message_frame(ident: str):
    """The notification's rendered HTML as its own document, for the page's sandboxed frame
    (the editor's preview mechanism): never inlined into a page of ours."""
    found = timeline.timeline(g.workspace.id, ident)
    html = (found.notification.payload or {}).get("html") if found is not None else None
    if found is None or found.purged_at or not isinstance(html, str) or not html:
        abort(404)
    return framed(html, "text/html")


_LIST_ROW = re.compile(r"list-([0-9a-f]{32})-(\d+)")


def _list_of(correlation_id: str | None) -> tuple[RecipientList, int] | None:
    """The list (of this workspace) and row a notification was sent from, if it was."""
    matched = _LIST_ROW.fullmatch(correlation_id or "")
    if matched is None:
        return None
    kept = RecipientList.get_or_none(RecipientList.id == uuid.UUID(matched[1]),
                                     RecipientList.workspace == g.workspace.id)
    return (kept, int(matched[2])) if kept is not None else None
