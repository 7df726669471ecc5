"""Senders (Owner or Admin): add a domain and publish its records, `Check now`, single
senders confirmed by email, removal that names the live templates it would break. The
rules are the engine's (engine/senders), the ones `herald senders` uses."""

from __future__ import annotations

from flask import abort, flash, g, redirect, render_template, url_for
from flask_login import current_user

from engine.database.models import Sender
from engine.people import audit
from engine.senders import accounts, addresses, domains
from engine.senders.allowances import templates_using
from engine.senders.errors import SenderError
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.forms import DomainForm, SingleSenderForm, mark
from web.settings.pages import settings_page


def _page(domain_form: DomainForm | None = None, sender_form: SingleSenderForm | None = None,
          status: int = 200):
    rows = accounts.senders_of(g.workspace.account_id)
    shown = [{"row": row, "doc": domains.describe(row), "warning": domains.warning(row)}
             for row in rows if row.kind == "domain"]
    return render_template(
        "settings/senders.html", page="Senders", domains=shown,
        singles=[row for row in rows if row.kind == "address"],
        domain_form=domain_form or DomainForm(formdata=None),
        sender_form=sender_form or SingleSenderForm(formdata=None)), status


def _back():
    return redirect(url_for("settings.senders", workspace_id=g.workspace.id))


def _sender(sender_id) -> Sender:
    """A sender of this workspace's account; any other is a 404."""
    row = accounts.sender_in(g.workspace.account_id, sender_id)
    if row is None:
        abort(404)
    return row


@blueprint.get("/senders")
@settings_page("senders")
def senders():
    return _page()


@blueprint.post("/senders/domains")
@workspace_view("admin")
def add_domain():
    form = DomainForm()
    try:
        sender = domains.add_domain(g.workspace.account, form.domain.data, g.workspace)
    except SenderError as err:
        mark(form.domain, str(err))
        return _page(domain_form=form, status=400)
    audit.record(g.workspace, current_user.user, "sender.domain_added", sender.value)
    flash(f"Publish the records of {sender.value} below, then press Check now.", "info")
    return _back()


@blueprint.post("/senders/<uuid:sender_id>/check")
@workspace_view("admin")
def check_now(sender_id):
    sender = _sender(sender_id)
    try:
        sender = domains.check_domain(sender)
    except SenderError as err:
        flash(str(err), "error")
        return _back()
    status = domains.status_at(sender)
    flash(f"{sender.value} is {status}." + (" Mail from it is accepted now." if
                                           status == "verified" else ""), "info")
    return _back()


@blueprint.post("/senders/addresses")
@workspace_view("admin")
def add_sender():
    form = SingleSenderForm()
    try:
        sender = addresses.add_address(g.workspace.account, form.address.data,
                                       form.from_name.data, form.postal_address.data,
                                       g.workspace)
    except SenderError as err:
        target = getattr(form, err.field or "address", form.address)
        mark(target, str(err))
        return _page(sender_form=form, status=400)
    audit.record(g.workspace, current_user.user, "sender.address_added", sender.value)
    flash(f"A confirmation link went to {sender.value}; it works for 48 hours.", "info")
    return _back()


@blueprint.post("/senders/<uuid:sender_id>/resend")
@workspace_view("admin")
def resend_link(sender_id):
    try:
        sender = addresses.resend(_sender(sender_id))
    except SenderError as err:
        flash(str(err), "error")
        return _back()
    flash(f"A new confirmation link went to {sender.value}.", "info")
    return _back()


@blueprint.get("/senders/<uuid:sender_id>/remove")
@workspace_view("admin")
def confirm_remove_sender(sender_id):
    sender = _sender(sender_id)
    return render_template("settings/sender_remove.html", page="Senders", sender=sender,
                           using=templates_using(sender))


@blueprint.post("/senders/<uuid:sender_id>/remove")
@workspace_view("admin")
def remove_sender(sender_id):
    sender = _sender(sender_id)
    affected = accounts.remove(sender, confirmed=True)
    audit.record(g.workspace, current_user.user, "sender.removed", sender.value,
                 {"kind": sender.kind, "liveTemplates": affected})
    flash(f"{sender.value} is no longer a sender.", "info")
    return _back()
