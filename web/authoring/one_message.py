"""``Send one message`` (docs/web.md): on the page of a template whose channel is sent to
lists (email, SMS: its ``list_column``), a form with the recipient and a textbox per tag of
the live version; ``Send`` sends it through the real pipeline
(engine/lists/one_message.py), counted in Reports. Every member may; the audit log records
who sent to whom."""

from __future__ import annotations

from typing import Any

from flask import abort, flash, g, redirect, render_template, request, url_for

from engine.authoring import samples
from engine.database.models import Template
from engine.lists import one_message
from engine.lists.rows import recipient_column
from engine.people import audit
from engine.plugins.manager import default_registry
from web.authoring import loading
from web.authoring.blueprint import blueprint
from web.permissions import workspace_view


def _sendable(template_id) -> Template:
    template = loading.authorable(loading.template(template_id))
    if recipient_column(template.channel) is None:
        abort(404)
    return template


def _page(template: Template, values: dict[str, str] | None = None,
          problems: dict[str, str] | None = None, status: int = 200):
    version = one_message.live_version(g.workspace, template)
    names = one_message.tag_names(version, template.channel)
    if values is None:  # the editor's sample values as a start
        remembered = samples.remembered(template)
        values = {n: str(remembered.get(n, "")) for n in names}
    return render_template("authoring/one_message.html", template=template, version=version,
                           names=names, values=values, problems=problems or {},
                           channel=default_registry().channel(template.channel)), status


@blueprint.get("/templates/<template_id>/send-one")
@workspace_view("member")
def one_message_form(template_id):
    return _page(_sendable(template_id))


@blueprint.post("/templates/<template_id>/send-one")
@workspace_view("member")
def send_one_message(template_id):
    template = _sendable(template_id)
    version = one_message.live_version(g.workspace, template)
    names = one_message.tag_names(version, template.channel)
    values: dict[str, Any] = {n: request.form.get(f"tag-{n}", "") for n in names}
    recipient = request.form.get("recipient", "")
    try:
        sent = one_message.send_one(g.workspace, template, recipient, values)
    except one_message.Refused as err:
        return _page(template, {**values, "": recipient}, err.fields, 400)
    audit.record(g.workspace, loading.current_user_row(), "message.sent", template.name,
                 {"notificationId": str(sent)})
    flash("Sent: the message is accepted and on its way. Its progress is below.", "info")
    return redirect(url_for("reports.notification", workspace_id=g.workspace.id,
                            ident=str(sent)))
