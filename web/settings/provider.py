"""The workspace's own email provider: stored encrypted, shown back only as its host,
checked as `herald apply` checks it, and tried with one test message. Several URLs (one a
line) are an ordered list, tried in turn (failover, docs/delivery.md)."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from flask import flash, g, redirect, render_template, url_for
from flask_login import current_user

from config.redaction import MASK, mask_secrets, mask_url
from config.settings import provider_scheme_of, provider_urls
from engine import runtime
from engine.people import audit, mail, users
from engine.people.errors import PeopleError
from engine.plugins.contracts import DeliveryError, DestinationRefused
from engine.plugins.manager import provider_scheme
from engine.webhooks.provider_hosts import ProviderEgress, own_provider_problem
from web.permissions import workspace_view
from web.settings.background_tests import Busy, provider_tests
from web.settings.blueprint import blueprint
from web.settings.forms import ProviderForm, ProviderTestForm, mark
from web.settings.pages import settings_page
from web.settings.provider_fields import fields_url, seal, unmasked, unseal

MAX_URL = 2000
MAX_PROVIDERS = 5


def shown(url: str | None) -> str | None:
    """What may be shown of a provider URL: its scheme, host and port, never credentials
    or query parameters (where HTTP providers keep their tokens)."""
    if not url:
        return None
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}"


def _own() -> list[dict]:
    """The workspace's own providers in order (stored as one {plugin, url} or a list)."""
    raw = g.workspace.email_provider
    if not raw:
        return []
    value = json.loads(raw)
    return value if isinstance(value, list) else [value]


def _page(form: ProviderForm | None = None, test_form: ProviderTestForm | None = None,
          answer: dict | None = None, status: int = 200):
    own = _own()
    test_form = test_form or ProviderTestForm(formdata=None)
    if not test_form.recipient.data:
        test_form.recipient.data = current_user.email
    return render_template(
        "settings/provider.html", page="Email provider", form=form or ProviderForm(formdata=None),
        test_form=test_form, current=[shown(entry.get("url")) for entry in own],
        default=", then ".join(shown(url) or "" for url in provider_urls(
            runtime.settings().email_provider)) or "none configured",
        answer=answer), status


@blueprint.get("/email-provider")
@settings_page("email_provider")
def email_provider():
    return _page()


@blueprint.post("/email-provider")
@workspace_view("admin")
def save_provider():
    form = ProviderForm()
    me = (str(g.workspace.id), str(current_user.user.id))
    kept = unseal(form.sealed.data, *me)
    kept = kept if isinstance(kept, dict) else {}
    if (form.host.data or "").strip():
        # Decision (docs/web.md): with Host filled, the fields win over Provider URL.
        password = form.password.data or str(kept.get("password") or "")
        url, wrong = fields_url(form.host.data or "", form.port.data or "", form.user.data or "",
                                password, form.tls.data or "")
        for name, problem in wrong.items():
            mark(form[name], problem)
        for problem in ([] if wrong else _problems([url or ""])):
            mark(form.host, mask_secrets(problem))
        if wrong or form.host.errors:
            # Kept sealed, never echoed: the password is typed again only when it is what
            # is wrong; a URL left aside below comes back masked, as it would alone.
            urls = (form.provider_url.data or "").split()
            form.provider_url.data = "\n".join(mask_url(url) for url in urls)
            keep = {"urls": urls} if urls else {}
            if password and "password" not in wrong:
                keep["password"] = password
            form.sealed.data = seal(keep, *me) if keep else ""
            return _page(form, status=400)
        urls = [url or ""]
    else:
        urls = unmasked((form.provider_url.data or "").split(), kept.get("urls"))
        for problem in _problems(urls):
            mark(form.provider_url, mask_secrets(problem))
        if any(MASK in url for url in urls):
            mark(form.provider_url, "Type the password in place of *** (only a URL kept from "
                                    "your last try, with the same user and host, keeps it).")
        if form.provider_url.errors:
            # Never echo a credential: the URLs come back masked and sealed, so a corrected
            # URL whose credential is still *** keeps the one typed (a page may be cached,
            # shared or shown on a screen).
            form.provider_url.data = "\n".join(mask_url(url) for url in urls)
            form.sealed.data = seal({"urls": urls}, *me)
            return _page(form, status=400)
    entries = [{"plugin": provider_scheme(url), "url": url} for url in urls]
    g.workspace.email_provider = json.dumps(entries[0] if len(entries) == 1 else entries)
    g.workspace.save()
    names = ", then ".join(shown(url) or "" for url in urls)
    audit.record(g.workspace, current_user.user, "email_provider.changed", names)
    flash(f"Saved: this workspace's email goes through {names}.", "info")
    return redirect(url_for("settings.email_provider", workspace_id=g.workspace.id))


def _problems(urls: list[str]) -> list[str]:
    """What is wrong with the URLs typed, each named by its place when there are several."""
    if not urls:
        return ["Enter the provider's URL, such as "
                "smtp://user:password@smtp.example.com:587?tls=starttls."]
    if len(urls) > MAX_PROVIDERS:
        return [f"Enter at most {MAX_PROVIDERS} providers, one a line."]
    problems = []
    for number, url in enumerate(urls, start=1):
        which = f"Provider {number}: " if len(urls) > 1 else ""
        if len(url) > MAX_URL:
            problems.append(f"{which}enter a URL of at most {MAX_URL} characters.")
        elif not urlsplit(url).scheme:
            problems.append(f"{which}start the URL with its plugin's scheme, such as smtp://.")
        elif runtime.settings().production and provider_scheme_of(url) == "inbox":
            # As HERALD_EMAIL_PROVIDER and `herald apply`: nobody reads the inbox there.
            problems.append(f"{which}inbox:// is for development and test only.")
        elif problem := own_provider_problem(url, None, runtime.settings()):
            problems.append(f"{which}this URL cannot send: {problem}.")
    return [p[0].upper() + p[1:] for p in problems]


@blueprint.get("/email-provider/remove")
@workspace_view("admin")
def confirm_remove_provider():
    """The question before the workspace's own providers are forgotten (their credentials
    are not shown anywhere, so they cannot be put back from the page)."""
    if not g.workspace.email_provider:
        return redirect(url_for("settings.email_provider", workspace_id=g.workspace.id))
    return render_template("settings/provider_remove.html", page="Email provider",
                           current=[shown(e.get("url")) for e in _own()])


@blueprint.post("/email-provider/remove")
@workspace_view("admin")
def remove_provider():
    if g.workspace.email_provider:
        g.workspace.email_provider = None
        g.workspace.save()
        audit.record(g.workspace, current_user.user, "email_provider.removed")
    flash("This workspace's email goes through the service's default provider.", "info")
    return redirect(url_for("settings.email_provider", workspace_id=g.workspace.id))


@blueprint.post("/email-provider/test")
@workspace_view("admin")
def test_provider():
    test_form = ProviderTestForm()
    try:
        to = users.normalize_email(test_form.recipient.data or "", "recipient")
    except PeopleError as err:
        mark(test_form.recipient, err.message)
        return _page(test_form=test_form, status=400)
    entries = [(entry.get("plugin"), entry.get("url", "")) for entry in _own()]
    text = (f"This is a test message from the Herald workspace “{g.workspace.name}”, sent by "
            f"{current_user.email} to check its email provider.\n")
    workspace, user = g.workspace, current_user.user

    def work() -> dict:
        answer = _tested(to, text, entries, str(workspace.id))
        audit.record(workspace, user, "email_provider.tested", to, {"ok": answer["ok"]})
        return answer

    try:
        token = provider_tests.start(str(workspace.id), work)
    except Busy as err:
        mark(test_form.recipient, str(err))
        return _page(test_form=test_form, status=429)
    return _page(test_form=test_form, answer={"pending": True, "token": token})


@blueprint.get("/email-provider/test/<token>")
@workspace_view("admin")
def test_answer(token: str):
    """The answer of a test started on this page (htmx polls it until it has one)."""
    known, answer = provider_tests.answer(str(g.workspace.id), token)
    if not known:
        answer = {"ok": False, "text": "this test's answer is no longer kept: send another"}
    return render_template("settings/_provider_test.html", workspace=g.workspace,
                           answer=answer or {"pending": True, "token": token})


def _tested(to: str, text: str, entries: list, workspace_id: str) -> dict:
    """Send the test message (on the test pool's thread); the answer the page shows."""
    settings = runtime.settings()
    # The workspace's own providers connect only where spec 6.1 allows; the default is the
    # operator's, trusted.
    egress = ProviderEgress(settings.webhook_allow_private) if entries else None
    try:
        result = mail.send(to, "Herald test message", text, entries=entries or None,
                           workspace_id=workspace_id, egress=egress)
    except (DeliveryError, LookupError, ValueError) as err:
        return {"ok": False, "text": short_reason(err) + _route(err)}
    refused = "; ".join(f"{a}: refused{_code(why)}" for a, why in result.rejected.items())
    return {"ok": not refused, "text": (refused or "accepted") + _route(result),
            "id": result.provider_message_id}


def short_reason(err: Exception) -> str:
    """What the page says of a failed test: Herald's own words, never a server's or a
    vendor's answer (which could be any internal service's banner or page: docs/web.md)."""
    if isinstance(err, DestinationRefused):
        return str(err)  # Herald's rule, naming the host the Admin typed
    if isinstance(err, DeliveryError):
        reason = err.reason or "the provider did not take the message"
        return f"{reason} (status {err.status_code})" if err.status_code else reason
    return "this URL cannot send" if isinstance(err, LookupError | ValueError) else "failed"


def _route(outcome: object) -> str:
    """Which providers of a list were tried, and which took the message (failover)."""
    tried = getattr(outcome, "providers_tried", None)
    if not tried:
        return ""
    steps = "; ".join(f"{t['provider']}: {_outcome_word(t['outcome'])}" for t in tried)
    via = getattr(outcome, "delivered_via", None)
    return f" by {via} ({steps})" if via else f" ({steps})"


def _outcome_word(outcome: str) -> str:
    """A tried provider's outcome as the page shows it: its first word (sent, failed,
    skipped...), without the server's text that may follow."""
    return str(outcome).split(":", 1)[0][:40]


def _code(why: str) -> str:
    """A refusal's SMTP or HTTP status code, when it starts with one: " (550)"."""
    head = str(why)[:3]
    return f" ({head})" if head.isdigit() else ""
