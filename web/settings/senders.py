"""Senders: the account's verified domains and addresses, read-only until sender
verification has its own page."""

from __future__ import annotations

from flask import g, render_template

from engine.store.models import Sender
from web.permissions import workspace_view
from web.settings import blueprint


@blueprint.get("/senders")
@workspace_view("admin")
def senders():
    rows = list(Sender.select().where(Sender.account == g.workspace.account_id)
                .order_by(Sender.kind, Sender.value))
    return render_template("settings/senders.html", page="Senders", rows=rows)
