"""Send test: the editor's text to one recipient through the real pipeline, flagged test,
and its outcome polled (a small fragment every second) until it is delivered or failed."""

from __future__ import annotations

from flask import abort, g, redirect, url_for

from engine.authoring import draft_sends, drafts, samples
from engine.authoring.draft_sends import SendTestRefused
from engine.authoring.drafts import DraftError
from engine.authoring.samples import SampleError
from engine.people import audit
from web.authoring import loading
from web.authoring.blueprint import blueprint
from web.authoring.editor import notice
from web.authoring.render_slots import render_slot
from web.permissions import workspace_view


def _content_and_tags(template):
    """What htmx posts (the editor's text, the sample), else the saved draft and the
    remembered sample (the form without JavaScript posts only the recipient)."""
    editable = drafts.editable(template)
    form = loading.posted()
    if "body" in form:
        content = drafts.content_from_form(template.channel, form)
        tags = samples.parse(form.get("sample"))
    else:
        content, tags = editable.content, samples.remembered(template)
    return editable, content, tags


@blueprint.post("/templates/<template_id>/test-sends")
@workspace_view("member")
def send_test(template_id):
    loading.limit("test-send")
    with render_slot():  # before the body is read: a refused request costs no parse
        return _send_test(template_id)


def _send_test(template_id):
    template = loading.authorable(loading.template(template_id))
    recipient = loading.posted().get("recipient", "")
    try:
        editable, content, tags = _content_and_tags(template)
        sent = draft_sends.send_test(g.workspace, template, content, tags, recipient,
                                    editable.number)
    except (SendTestRefused, DraftError, SampleError) as err:
        message = str(err) if not isinstance(err, SampleError) else f"Sample tags: {err}"
        if loading.htmx():
            return loading.fragment("authoring/_test_result.html", error=message)
        notice(f"Test not sent: {message}")
        return redirect(url_for("authoring.editor", workspace_id=g.workspace.id,
                                template_id=template.id), 303)
    audit.record(g.workspace, loading.current_user_row(), "template.test_sent", template.name,
                 {"templateId": str(template.id), "notificationId": str(sent.id)})
    outcome = draft_sends.outcome(g.workspace, template, sent.id)
    if loading.htmx():
        return loading.fragment("authoring/_test_result.html", template=template,
                               sent=sent, outcome=outcome)
    notice(f"Test queued to {outcome.recipient}: reload to see its outcome")
    return redirect(url_for("authoring.editor", workspace_id=g.workspace.id,
                            template_id=template.id), 303)


@blueprint.get("/templates/<template_id>/test-sends/<notification_id>")
@workspace_view("member")
def test_outcome(template_id, notification_id):
    template = loading.template(template_id)
    ident = loading.parse_uuid(notification_id)
    outcome = draft_sends.outcome(g.workspace, template, ident) if ident else None
    if outcome is None:
        abort(404)
    return loading.fragment("authoring/_test_result.html", template=template,
                           sent_id=ident, outcome=outcome)
