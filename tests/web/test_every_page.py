"""Every page of the web application, on a 375 px phone, checked by axe-core (issue 40): no
violation, and nothing wider than the phone (a table scrolls in its own box).

The pages are found the way a person finds them: from the signed-out pages and, signed in
as an Owner of a workspace with something in every list, by following each link and each
GET form (the confirmations) of every page reached. A page a later change adds joins the
walk by being linked; one kind of page (its path with ids taken out) is checked once,
except the template editor, checked per channel."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from playwright.sync_api import Browser, Page

from engine.authoring import hierarchy
from engine.catalog import suppressions, topics
from engine.database.models import Account
from engine.database.models.inbox import InboxMessage
from engine.people import invitations, resets, users
from engine.senders import addresses, domains
from tests import factories
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in
from tests.web.test_reports_page import mixed_run
from tests.web.test_senders_page import zoned  # noqa: F401 (a fixture)

PHONE = {"width": 375, "height": 740}
_ID = re.compile(r"/(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+|"
                 r"[A-Za-z0-9_-]{20,})(?=/|$)")
# Not pages: files, JSON, signing out, the API's own documents.
_NOT_PAGES = re.compile(r"(\.csv$|/export|/sign-out$|^/dev/inbox/(messages|webhooks)|"
                        r"^/openapi|^/assets/|/preview/)")


def _kind(path: str) -> str:
    return _ID.sub("/{id}", path)


def _check(page: Page, url: str, problems: list[str]) -> None:
    response = page.goto(url)
    status = response.status if response else 0
    if status >= 500 or status == 0:
        problems.append(f"{url}: answered {status}")
        return
    page.wait_for_load_state()  # deferred scripts (the code editor) have run
    width = page.evaluate("document.documentElement.scrollWidth")
    if width > PHONE["width"]:
        # Say which element makes it so: the innermost whose hiding brings the page back.
        wide = page.evaluate("""(limit) => {
            const fits = () => document.documentElement.scrollWidth <= limit;
            const name = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
                (typeof e.className === "string" && e.className.trim() ?
                 "." + e.className.trim().split(/ +/).join(".") : "");
            const find = (parent) => {
                for (const child of parent.children) {
                    const before = child.style.display;
                    child.style.display = "none";
                    const culprit = fits();
                    child.style.display = before;
                    if (culprit) return find(child) || child;
                }
                return null;
            };
            const found = find(document.body);
            return found ? name(found) : "several elements";
        }""", PHONE["width"])
        problems.append(f"{url}: {width} px wide on a {PHONE['width']} px phone ({wide})")
    problems.extend(f"{url}: {line}" for line in violations(page))


def _links(page: Page, base: str) -> list[str]:
    """Same-origin links and GET forms' actions of the page (downloads left out)."""
    found = page.evaluate("""() => [
        ...[...document.querySelectorAll("a[href]:not([download])")].map(a => a.href),
        ...[...document.querySelectorAll("form")].filter(
            f => (f.getAttribute("method") || "get").toLowerCase() === "get").map(f => f.action)
    ]""")
    out = []
    for href in found:
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != base or _NOT_PAGES.search(parts.path):
            continue
        out.append(urljoin(base, parts.path + (f"?{parts.query}" if parts.query else "")))
    return out


def _walk(page: Page, base: str, start: list[str], explicit: list[str],
          problems: list[str]) -> set[str]:
    seen: set[str] = set()
    queue = [(url, url) for url in explicit] + [(url, _kind(url)) for url in start]
    while queue:
        url, key = queue.pop(0)
        if key in seen:
            continue
        seen.add(key)
        seen.add(_kind(urlsplit(url).path))  # an editor checked per channel, once each
        _check(page, urljoin(base, url), problems)
        for link in _links(page, base):
            path = urlsplit(link).path
            queue.append((link, _kind(path)))
    return seen


def _workspace_with_everything():
    """An Owner's workspace with something in every list the pages show."""
    account = factories.account(name="Acme")
    ws = factories.workspace(account)
    make_user("ada@example.com", ws, "owner", "Ada")
    make_user("bob@example.com", ws, "member", "Bob")
    run, _ = mixed_run(ws)
    email, sms = run.templates
    webhook = factories.template(ws, "webhook")
    folder = hierarchy.create_folder(email.project, None, "Welcome")
    hierarchy.create_folder(email.project, folder, "Day one")
    run.sent("suppressed", to=("left@example.net",))
    factories.api_key(ws, name="web-main")
    suppressions.add(ws.id, ["bounced@example.net"], "bounce")
    topics.add(ws.id, "news", "The monthly newsletter")
    suppressions.add(ws.id, ["left@example.net"], "unsubscribe", "topic:news")
    invitations.invite(ws, "cy@example.com", "member", None, None, "http://localhost")
    domains.add_domain(Account.get_by_id(account.id), "acme.example")
    return ws, (email, sms, webhook)


def test_every_page_passes_axe_and_fits_a_phone(browser: Browser, zoned):  # noqa: F811
    base = zoned.url
    ws, templates = _workspace_with_everything()
    email = templates[0]
    problems: list[str] = []

    # Signed out: sign-in, the reset request, a reset link, an invitation link.
    context = browser.new_context(base_url=base, viewport=PHONE)
    page = context.new_page()
    reset = resets.issue(users.find("bob@example.com"), base)
    invited = invitations.invite(ws, "dee@example.com", "admin", None, None, base)
    addresses.add_address(Account.get_by_id(ws.account_id), "news@acme.example", "Acme News",
                          "1 Main St, Springfield")
    mailed = InboxMessage.select().order_by(InboxMessage.id.desc()).first().text
    confirm = re.search(re.escape(addresses.CONFIRM_PATH) + r"\S+", mailed).group(0)
    for url in ("/", "/reset", reset.url, invited.url, "/docs", "/dev/inbox", confirm):
        _check(page, urljoin(base, url), problems)
    context.close()

    # Signed in as the Owner: follow every link from the templates and the account.
    context = browser.new_context(base_url=base, viewport=PHONE)
    page = context.new_page()
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/templates/{email.id}")
    page.get_by_role("textbox", name="Subject").fill("Hello again {{name}}")
    page.get_by_role("status").filter(has_text="Saved").wait_for()
    page.get_by_role("button", name="Publish").click()  # two versions: Compare is linked
    editors = [f"/w/{ws.id}/templates/{t.id}" for t in templates]
    seen = _walk(page, base, [f"/w/{ws.id}/templates", "/account"], editors, problems)

    # States no link reaches: a key shown once, a refused form.
    page.goto(f"/w/{ws.id}/settings/api-keys")
    page.get_by_role("textbox", name="Name").fill("deploy")
    page.get_by_role("button", name="Create API key").click()
    page.get_by_role("textbox", name="New API key").wait_for()
    problems.extend(f"new API key: {line}" for line in violations(page))
    page.get_by_role("textbox", name="Name").fill("")
    page.get_by_role("button", name="Create API key").click()
    problems.extend(f"refused API key: {line}" for line in violations(page))
    context.close()

    assert len(seen) >= 25, sorted(seen)  # the walk found the application, not one page
    assert not problems, "\n".join(problems)
