"""The dev inbox: what the inbox:// provider received, as a page and as JSON."""

from __future__ import annotations

from flask import Blueprint, jsonify, render_template_string

from api.framing import refuse_foreign_host
from engine.catalog.keys import iso
from engine.database.models.inbox import InboxMessage
from engine.formats.times import in_words
from engine.plugins.manager import default_registry

blueprint = Blueprint("dev_inbox", __name__)
# Every tenant's mail, unauthenticated: never to a page whose DNS name rebinds to loopback.
blueprint.before_request(refuse_foreign_host)

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dev inbox · Herald</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/assets/herald.css">
<style>
iframe.mail{width:100%;height:16rem;border:1px solid #ccc;background:#fff}
details{margin:.2rem 0}summary{padding:.2rem 0;cursor:pointer}
.ok{color:#075}.bad{color:#b00}
</style></head><body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/">Herald</a>
<span>Dev inbox (development only)</span></header>
<main id="main">
<p><a href="/">Back to Herald</a></p>
<h1>Dev inbox</h1>
<p>{{ messages|length }} message(s): what the <code>inbox://</code> provider received,
newest first. JSON: <a href="/dev/inbox/messages">/dev/inbox/messages</a>.
<button type="button" class="secondary"
onclick="fetch('/dev/inbox/messages',{method:'DELETE'}).then(()=>location.reload())">
Empty</button>
</p>
<div class="table-wrap" role="region" aria-label="Messages" tabindex="0">
<table><thead><tr><th scope="col">When</th><th scope="col">Channel</th>
<th scope="col">From</th><th scope="col">To</th><th scope="col">Message</th></tr></thead>
<tbody>
{% for m in messages %}
<tr><td>{{ when(m.created_at) }}</td>
<td>{{ label(m.channel) }}</td>
<td>{{ m.sender or "" }}</td>
<td>{{ (m.to + m.cc + m.bcc)|join(", ") }}</td>
<td>{% if m.subject is none and not m.html %}<pre class="plain-text">{{ m.text or "" }}</pre>
{% else %}<strong>{{ m.subject or "" }}</strong>
{% if m.html %}<details><summary>HTML</summary>
<iframe class="mail" sandbox="" title="{{ m.subject or 'Message' }}"
srcdoc="{{ m.html }}"></iframe></details>{% endif %}
<details><summary>Text</summary><pre class="plain-text">{{ m.text or "" }}</pre></details>
{% if m.raw %}<details><summary>Raw MIME</summary>
<pre class="plain-text"><code>{{ m.raw }}</code></pre>
</details>{% endif %}{% endif %}</td></tr>
{% endfor %}</tbody></table></div>
<h2 id="webhooks">Webhooks</h2>
<p>{{ webhooks|length }} webhook(s) caught at
<code>{{ request.host_url }}dev/inbox/webhooks/NAME</code> (any name: a send's
<code>webhookOptions.urlOverride</code>, or a workspace's callback URL). JSON:
<a href="/dev/inbox/webhooks">/dev/inbox/webhooks</a>.</p>
<div class="table-wrap" role="region" aria-label="Webhooks" tabindex="0">
<table><thead><tr><th scope="col">When</th><th scope="col">Name</th>
<th scope="col">Signature</th><th scope="col">Headers and body</th></tr></thead><tbody>
{% for w in webhooks %}
<tr><td>{{ when(w.created_at) }}</td><td>{{ w.name }}</td>
<td class="{{ 'ok' if w.verified else 'bad' }}">{{ "\u2714" if w.verified else "\u2718" }}
{{ w.verdict }}</td>
<td><details><summary>Headers</summary>
<pre class="plain-text">{% for k, v in w.headers.items() %}{{ k }}: {{ v }}
{% endfor %}</pre></details><pre class="plain-text"><code>{{ w.body }}</code></pre></td></tr>
{% endfor %}</tbody></table></div></main></body></html>"""


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

    return render_template_string(PAGE, messages=_latest(), webhooks=caught.latest(),
                                  when=in_words, label=_label)


def _label(channel: str) -> str:
    """A message's channel by its label (``SMS``), as the editor names it."""
    try:
        return default_registry().channel(channel).label
    except LookupError:
        return channel.capitalize()


@blueprint.get("/dev/inbox/messages")
def messages():
    return jsonify([_as_json(m) for m in _latest()])


@blueprint.delete("/dev/inbox/messages")
def clear():
    deleted = InboxMessage.delete().execute()
    return jsonify({"deleted": deleted})
