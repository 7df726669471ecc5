"""The page a single sender's confirmation link opens: its button confirms, a GET never does
(mail scanners follow links). The token in the URL is the only credential."""

from __future__ import annotations

from flask import Blueprint, render_template_string

from engine.senders.addresses import CONFIRM_PATH, confirm, pending_link
from engine.senders.errors import SenderError

blueprint = Blueprint("sender_confirmation", __name__)
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Confirm sender</title></head><body style="font-family:system-ui;margin:3rem"><main>
{% if problem %}<h1>Link not valid</h1><p role="alert">{{ problem }}</p>
{% elif done %}<h1>Sender confirmed</h1>
<p role="status">{{ address }} is now a verified sender.</p>
{% else %}<h1>Confirm sender</h1>
<p>Confirm that {{ name }} &lt;{{ address }}&gt; may send email through Herald.</p>
<form method="post"><button>Confirm</button></form>{% endif %}</main></body></html>"""
HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
           "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
           "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                                      "form-action 'self'; frame-ancestors 'none'"}


def _page(status: int = 200, **values: object):
    values = {"problem": None, "done": False, "address": "", "name": "", **values}
    return render_template_string(PAGE, **values), status, HEADERS


@blueprint.get(CONFIRM_PATH + "<token>")
def show(token: str):
    try:
        sender = pending_link(token)
    except SenderError as err:
        return _page(404, problem=str(err))
    return _page(address=sender.value, name=sender.from_name or "")


@blueprint.post(CONFIRM_PATH + "<token>")
def confirmed(token: str):
    try:
        sender = confirm(token)
    except SenderError as err:
        return _page(404, problem=str(err))
    return _page(done=True, address=sender.value)
