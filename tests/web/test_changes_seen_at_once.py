"""Issue 44: a change made in the browser, by `herald apply` or by `herald keys revoke` is
seen by the very next request on every process of a multi-process `herald serve`, whose
caches were warmed by sends just before (they keep an entry up to HERALD_KEY_CACHE_SECONDS,
5 s: the checks below all run inside that window, so a stale cache would answer them)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import Page, expect

from engine.catalog import suppressions
from engine.database.models import ApiKey, Notification, Template
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.web.authoring_support import herald, herald_env, replace_text
from tests.web.conftest import make_user, open_editor, sign_in

pytestmark = pytest.mark.slow

WARM_SENDS = 30  # spread over the server's processes by the kernel, each a new connection
CHECKS = 12


@pytest.fixture
def serve(live) -> Iterator[str]:
    """`herald serve` with two worker processes (its default is one per core), beside the
    web application the browser drives, on the same database and Redis."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--workers", "2"], env=herald_env(live),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "serve never answered"
            try:
                requests.get(f"{url}/healthz", timeout=5)
                break
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.1)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def _send(url: str, key: str, ws, template) -> requests.Response:
    return requests.post(f"{url}/api/v1/notifications/send", timeout=10,
                         headers={"X-Api-Key": key, "Connection": "close"},
                         json={"tenantId": str(ws.id), "templateId": str(template.id),
                               "tags": [{"key": "name", "value": "Ada"}],
                               "emailOptions": {"to": ["ada@example.net"]}})


def _preview(url: str, key: str, ws, template, to: str) -> dict:
    answer = requests.post(f"{url}/api/v1/notifications/preview", timeout=10,
                           headers={"X-Api-Key": key, "Connection": "close"},
                           json={"tenantId": str(ws.id), "templateId": str(template.id),
                                 "tags": [{"key": "name", "value": "Ada"}],
                                 "emailOptions": {"to": [to]}})
    assert answer.status_code == 200, answer.text
    return answer.json()


def _suppressed_named(url: str, key: str, ws, template) -> bool:
    """Whether a preview to gone@example.net reports it suppressed (spec 4.2's
    validationErrors)."""
    found = _preview(url, key, ws, template, "gone@example.net")["validationErrors"]
    return any(w["message"] == "gone@example.net is suppressed and will not receive it"
               for w in found)


def _versions_sent(url: str, key: str, ws, template, count: int) -> list[int]:
    """The version each of ``count`` sends rendered, as its notification row records it."""
    ids = []
    for _ in range(count):
        answer = _send(url, key, ws, template)
        assert answer.status_code == 202, answer.text
        ids.append(answer.json()["correlationId"])
    rows = Notification.select(Notification.correlation_id, Notification.version_number) \
        .where(Notification.correlation_id.in_(ids))
    by_id = {row.correlation_id: row.version_number for row in rows}
    return [by_id[i] for i in ids]


def _warm(url: str, key: str, ws, template, version: int) -> None:
    assert set(_versions_sent(url, key, ws, template, WARM_SENDS)) == {version}


def test_a_send_right_after_a_browser_publish_renders_the_new_version(page: Page, live,
                                                                      serve):
    ws = factories.workspace()
    template = factories.template(ws, content={"subject": "One {{name}}"})
    key = factories.api_key(ws)
    make_user("mia@example.com", ws, "member", "Mia")
    sign_in(page, "mia@example.com")
    for version in (2, 3, 4):
        _warm(serve, key, ws, template, version - 1)
        open_editor(page, template)
        replace_text(page, "Body", f"<p>Version {version} for {{{{name}}}}</p>")
        expect(page.get_by_role("status")).to_have_text("Saved")
        page.get_by_role("button", name="Publish").click()
        expect(page.get_by_role("status")).to_have_text(f"Published: version {version} is live")
        assert _versions_sent(serve, key, ws, template, CHECKS) == [version] * CHECKS


def test_a_send_right_after_a_browser_revoke_is_refused(page: Page, live, serve):
    ws = factories.workspace()
    template = factories.template(ws)
    key = factories.api_key(ws, name="backend")
    make_user("ada@example.com", ws, "admin", "Ada")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/api-keys")
    _warm(serve, key, ws, template, 1)
    page.get_by_role("row", name="backend").get_by_role("button", name="Revoke").click()
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("is revoked")).to_be_visible()
    for _ in range(CHECKS):
        answer = _send(serve, key, ws, template)
        assert answer.status_code == 401 and answer.json()["errorCode"] == "api_keys.invalid"
    validated = requests.get(f"{serve}/api/v1/api-keys/validate", timeout=10,
                             headers={"X-Api-Key": key}).json()
    assert validated["status"] == "revoked"


def test_a_preview_right_after_a_suppression_names_it(page: Page, live, serve):
    ws = factories.workspace()
    template = factories.template(ws)
    key = factories.api_key(ws)
    make_user("ada@example.com", ws, "admin", "Ada")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/suppressions")
    for _ in range(WARM_SENDS):
        assert _suppressed_named(serve, key, ws, template) is False
    page.get_by_role("textbox", name="Email address").fill("gone@example.net")
    page.get_by_role("button", name="Add suppression").click()
    expect(page.get_by_role("row", name="gone@example.net")).to_be_visible()
    for _ in range(CHECKS):
        assert _suppressed_named(serve, key, ws, template) is True
    suppressions.remove(ws.id, "gone@example.net")  # and back, by the engine's own writer
    for _ in range(CHECKS):
        assert _suppressed_named(serve, key, ws, template) is False


def test_a_send_right_after_herald_apply_renders_the_version_it_made_live(live, serve):
    ws = factories.workspace()
    template = factories.template(ws, content={"subject": "One {{name}}"})
    key = factories.api_key(ws)
    exported = herald(live, "export", "--workspace", str(ws.id))
    _warm(serve, key, ws, template, 1)
    (node,) = [t for a in exported["accounts"] for w in a["workspaces"]
               for p in w["projects"] for t in p.get("templates", [])
               if t["id"] == str(template.id)]
    node["versions"].append({**node["versions"][0], "subject": "Two {{name}}",
                             "status": "published"})
    herald(live, "apply", "-", stdin=json.dumps(exported))
    assert Template.get_by_id(template.id).versions.count() == 2
    assert _versions_sent(serve, key, ws, template, CHECKS) == [2] * CHECKS


def test_a_send_right_after_herald_keys_revoke_is_refused(live, serve):
    ws = factories.workspace()
    template = factories.template(ws)
    key = factories.api_key(ws, name="backend")
    _warm(serve, key, ws, template, 1)
    key_id = ApiKey.get(ApiKey.workspace == ws, ApiKey.name == "backend").id
    herald(live, "keys", "revoke", str(key_id))
    for _ in range(CHECKS):
        answer = _send(serve, key, ws, template)
        assert answer.status_code == 401 and answer.json()["errorCode"] == "api_keys.invalid"


def _footers_sent(url: str, key: str, ws, template, count: int) -> set[str]:
    """The footer text each of ``count`` sends rendered (its stored HTML)."""
    ids = []
    for _ in range(count):
        answer = _send(url, key, ws, template)
        assert answer.status_code == 202, answer.text
        ids.append(answer.json()["correlationId"])
    rows = Notification.select(Notification.payload).where(
        Notification.correlation_id.in_(ids))
    return {row.payload["html"].split("<footer>")[1].split("</footer>")[0] for row in rows}


def test_a_send_right_after_a_partial_publish_renders_the_new_footer(page: Page, live,
                                                                     serve):
    from engine.catalog import partials

    ws = factories.workspace()
    key = factories.api_key(ws)
    footer = partials.create(ws.id, "footer")
    first = partials.draft(footer)
    first.body = "<footer>Footer 1</footer>"
    first.save()
    partials.publish(first)
    welcome = factories.template(ws, content={"body": "<p>Welcome</p>{{> footer}}"})
    receipt = factories.template(ws, content={"body": "{{#> footer}}x{{/footer}}"})
    make_user("mia@example.com", ws, "member", "Mia")
    sign_in(page, "mia@example.com")
    for number in (2, 3):
        for template in (welcome, receipt):
            assert _footers_sent(serve, key, ws, template, WARM_SENDS) == {
                f"Footer {number - 1}"}
        page.goto(f"/w/{ws.id}/partials/{footer.id}")
        replace_text(page, "Body", f"<footer>Footer {number}</footer>")
        expect(page.get_by_role("status")).to_have_text("Saved")
        page.get_by_role("button", name="Publish").click()
        page.get_by_role("button", name="Publish").click()
        expect(page.get_by_role("status")).to_have_text(f"Published: version {number} is live")
        for template in (welcome, receipt):
            assert _footers_sent(serve, key, ws, template, CHECKS) == {f"Footer {number}"}
