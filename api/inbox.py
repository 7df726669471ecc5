"""The dev inbox: what the inbox:// provider received, as a page and as JSON."""

from __future__ import annotations

from flask import Blueprint, jsonify, render_template_string

from api.framing import refuse_foreign_host
from engine.catalog.keys import iso
from engine.store.models import InboxMessage

blueprint = Blueprint("dev_inbox", __name__)
# Every tenant's mail, unauthenticated: never to a page whose DNS name rebinds to loopback.
blueprint.before_request(refuse_foreign_host)

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Herald dev inbox</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.4rem;
text-align:left;vertical-align:top}iframe{width:100%;height:16rem;border:1px solid #ccc}
details{margin:.2rem 0}summary{padding:.2rem 0}.wrap{overflow-x:auto;position:relative}
code{font-size:12px}.ok{color:#075}.bad{color:#b00}
</style></head><body><main>
<h1>Dev inbox</h1>
<p>{{ messages|length }} message(s). JSON:
<a href="/dev/inbox/messages">/dev/inbox/messages</a>.
<button onclick="fetch('/dev/inbox/messages',{method:'DELETE'}).then(()=>location.reload())">
Empty</button>
</p>
<div class="wrap" role="region" aria-label="Messages" tabindex="0">
<table><tr><th>When</th><th>Channel</th><th>From</th><th>To</th><th>Subject / text</th></tr>
{% for m in messages %}
<tr><td>{{ m.created_at }}</td><td>{{ m.channel }}</td><td>{{ m.sender or "" }}</td>
<td>{{ (m.to + m.cc + m.bcc)|join(", ") }}</td>
<td><strong>{{ m.subject or "" }}</strong>
{% if m.html %}<details><summary>HTML</summary>
<iframe sandbox="" srcdoc="{{ m.html }}"></iframe></details>{% endif %}
<details><summary>Text</summary><pre>{{ m.text or "" }}</pre></details>
{% if m.raw %}<details><summary>Raw MIME</summary><pre><code>{{ m.raw }}</code></pre>
</details>{% endif %}</td></tr>
{% endfor %}</table></div>
<h2 id="webhooks">Webhooks</h2>
<p>{{ webhooks|length }} webhook(s) caught at
<code>{{ request.host_url }}dev/inbox/webhooks/NAME</code> (any name: a send's
<code>webhookOptions.urlOverride</code>). JSON:
<a href="/dev/inbox/webhooks">/dev/inbox/webhooks</a>.</p>
<div class="wrap" role="region" aria-label="Webhooks" tabindex="0">
<table><tr><th>When</th><th>Name</th><th>Signature</th><th>Headers and body</th></tr>
{% for w in webhooks %}
<tr><td>{{ w.created_at }}</td><td>{{ w.name }}</td>
<td class="{{ 'ok' if w.verified else 'bad' }}">{{ "\u2714" if w.verified else "\u2718" }}
{{ w.verdict }}</td>
<td><details><summary>Headers</summary><pre>{% for k, v in w.headers.items() %}{{ k }}: {{ v }}
{% endfor %}</pre></details><pre><code>{{ w.body }}</code></pre></td></tr>
{% endfor %}</table></div></main></body></html>"""


def _as_json(message: InboxMessage) -> dict:
    return {
        "id": message.id,
        "channel": message.channel,
        "from": message.sender,
        "to": message.to,
        "cc": message.cc,
        "bcc": message.bcc,
        "subject": message.subject,
        "text": message.text,
        "html": message.html,
        "raw": message.raw,
        "headers": message.headers,
        "notificationId": message.notification_id,
        "workspaceId": message.workspace_id,
        "createdAt": iso(message.created_at),
    }


def _latest(limit: int = 200) -> list[InboxMessage]:
    return list(InboxMessage.select().order_by(InboxMessage.id.desc()).limit(limit))


@blueprint.get("/dev/inbox")
def page():
    # Autoescaping keeps the rendered mail inert; the HTML preview runs in a sandboxed iframe.
    from engine.webhooks import caught

    return render_template_string(PAGE, messages=_latest(), webhooks=caught.latest())


@blueprint.get("/dev/inbox/messages")
def messages():
    return jsonify([_as_json(m) for m in _latest()])


@blueprint.delete("/dev/inbox/messages")
def clear():
    deleted = InboxMessage.delete().execute()
    return jsonify({"deleted": deleted})
