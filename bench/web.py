"""`web_preview`: the editor's preview request against the API's preview of the same 50 KB
email template, both through gunicorn in the same run (issue 25).

- web_preview: the editor posting its text (the live text with its subject changed, so a
  draft: rendered from the text, not the stored program) and the sample tags, as htmx does
  while one types, signed in, with its CSRF header; the answer is the preview fragment and
  the document stashed for the sandboxed frame. Ratio against `POST
  /api/v1/notifications/preview` of the live version with the same tags. Target 0.8.
- web_preview_edit: the same request with a different text each time (each keystroke
  compiles the text afresh), one connection, against the API preview on one connection;
  the ratio of median latencies, reported without a target (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import html
import http.client
import json
import re
import statistics
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass

from bench.api import tenant as api_tenant
from bench.common import (
    bench_database_url,
    bench_env,
    figure,
    herald,
    median_pair,
    paired,
    redis_server,
    rounds,
    server,
)
from bench.loadgen import LoadResult, run_load
from bench.render import _HEAD, _ROW, _TAIL, TAGS

WS = "5e1d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c"
TPL = "4d3c2b1a-0f9e-4d8c-8b7a-6f5e4d3c2b1a"
BODY = _HEAD + _ROW * (50_000 // len(_ROW)) + _TAIL  # ~50 KB of tags, blocks and text
EMAIL = "bench-author@bench.example"
PASSWORD = "bench password 0123456789"
ROUNDS = rounds(5, 3)


def tenant() -> dict:
    return api_tenant("Bench web", WS, TPL, "Big", BODY)


class Browser:
    """A signed-in session over plain HTTP: cookies and the page's CSRF token."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, form: dict | None = None,
                headers: dict | None = None) -> tuple[int, str, dict]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        body = urllib.parse.urlencode(form).encode() if form is not None else None
        sent = {**(headers or {}), "Cookie": self.cookie_header()}
        if body is not None:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        text = response.read().decode()
        for value in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = value.partition("=")
            self.cookies[name] = rest.split(";")[0]
        conn.close()
        return response.status, text, dict(response.headers)

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())


def _sign_in(env: dict, port: int) -> Browser:
    """Accept an invitation made by `herald users invite`, as a person would."""
    invited = json.loads(herald(env, "users", "invite", EMAIL, "--workspace", WS,
                                "--role", "member"))
    path = "/" + invited["url"].split("/", 3)[3]
    browser = Browser(port)
    _, page, _ = browser.request("GET", path)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    status, _, _ = browser.request("POST", path, {"name": "Bench", "password": PASSWORD,
                                                  "csrf_token": token})
    if status != 302:
        raise RuntimeError(f"could not accept the invitation ({status})")
    return browser


def _editor_request(browser: Browser) -> tuple[str, dict, dict]:
    """The preview request htmx sends from the editor page, with its form."""
    status, page, _ = browser.request("GET", f"/w/{WS}/templates/{TPL}")
    if status != 200:
        raise RuntimeError(f"the editor answered {status}")
    csrf = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
    token = re.search(r'name="editor" value="([^"]+)"', page).group(1)
    form = {"csrf_token": csrf, "basis": "", "subject": "Order {{orderId}} (draft)",
            "body": BODY, "htmlHead": "", "fromAddress": "shop@bench.example",
            "fromName": "Shop", "emailType": "Transactional", "editor": token,
            "sample": json.dumps(TAGS)}
    # As static/editor.js sends it (hx-ext="editor-json").
    headers = {"HX-Request": "true", "X-CSRFToken": csrf, "Cookie": browser.cookie_header(),
               "Content-Type": "application/json"}
    path = f"/w/{WS}/templates/{TPL}/preview"
    # The request includes #samples, its hidden "remembered" too: the first preview with
    # this sample remembers it and swaps the field's new value in (out of band), so the
    # requests made while one types carry it and write nothing.
    form["remembered"] = _remembered(browser, path, form, headers)
    return path, form, headers


def _remembered(browser: Browser, path: str, form: dict, headers: dict) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", browser.port, timeout=30)
    conn.request("POST", path, body=json.dumps(form).encode(), headers=headers)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    found = re.search(r'name="remembered" id="remembered" value="([^"]*)"', text)
    if response.status != 200 or found is None:
        raise RuntimeError(f"the first preview answered {response.status} without the sample")
    return html.unescape(found.group(1))


def _sequential_ms(port: int, path: str, bodies: list[bytes], headers: dict) -> float:
    """Median latency of one connection sending each body in turn."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    times = []
    for body in bodies:
        start = time.perf_counter()
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{path} answered {response.status}")
        times.append((time.perf_counter() - start) * 1000)
    conn.close()
    return statistics.median(times[3:])


def _edit_figure(port: int, path: str, form: dict, headers: dict, api: bytes,
                 api_headers: dict) -> dict:
    edits = [json.dumps({**form, "body": BODY + f"<!-- keystroke {n} -->"}).encode()
             for n in range(40)]
    web_ms = _sequential_ms(port, path, edits, headers)
    api_ms = _sequential_ms(port, "/api/v1/notifications/preview", [api] * 40,
                            {**api_headers, "Content-Type": "application/json"})
    return figure("web_preview_edit", web_ms, "ms (a new text each request)", api_ms,
                  higher_is_better=False)


def _rate(result: LoadResult) -> float:
    return result.rate


@dataclass(frozen=True)
class EditorBench:
    """A running server with the bench's template, a signed-in editor and an API key."""

    port: int
    pid: int
    path: str             # the editor's preview
    form: dict            # the editor's form, as htmx posts it
    headers: dict         # the editor's headers (session cookie, CSRF, htmx)
    api_body: bytes       # the API preview of the same template with the same tags
    api_headers: dict


@contextlib.contextmanager
def editor_bench(limited: bool = False) -> Iterator[EditorBench]:
    """The database (recreated), the bench's Redis, `herald serve`'s gunicorn and an editor
    signed in to it (this module's figures and `bench.profile`'s editor runs); ``limited``
    keeps the per-person preview limit as a deployment has it."""
    with redis_server() as redis:
        env = bench_env(bench_database_url(), redis.url)
        if not limited:
            # One person is the whole load here: their per-minute preview limit would
            # measure the 429 (docs/web.md, "Security").
            env["HERALD_RATE_LIMIT_WEB_PREVIEW"] = "100000000"
        herald(env, "db", "upgrade")
        key = json.loads(herald(env, "apply", "-", stdin=json.dumps(tenant())))["apiKeys"][0][
            "key"]
        api_body = json.dumps({"tenantId": WS, "templateId": TPL, "tags": [
            {"key": k, "value": v} for k, v in TAGS.items()]}).encode()
        with server("cli.app:create_app", env) as (port, pid):
            env["HERALD_PUBLIC_URL"] = f"http://127.0.0.1:{port}"
            path, form, headers = _editor_request(_sign_in(env, port))
            yield EditorBench(port, pid, path, form, headers, api_body, {"X-Api-Key": key})


def run(seconds: float = 2.0) -> list[dict]:
    rounds = []
    with editor_bench() as bench:
        port, path, headers = bench.port, bench.path, bench.headers
        web_body = json.dumps(bench.form).encode()
        for number in range(ROUNDS):
            warm = 2.0 if number == 0 else 0.3
            rounds.append(paired(
                lambda warm=warm: run_load(
                    "127.0.0.1", port, "/api/v1/notifications/preview", method="POST",
                    body=bench.api_body, headers=bench.api_headers, seconds=seconds,
                    warmup=warm),
                lambda warm=warm: run_load(
                    "127.0.0.1", port, path, method="POST", body=web_body,
                    headers=headers, seconds=seconds, warmup=warm),
                number))
        edit = _edit_figure(port, path, bench.form, headers, bench.api_body, bench.api_headers)
    web, api = median_pair(rounds, _rate)
    errors = sum(r.errors for pair in rounds for r in pair)
    figures = [figure("web_preview", web.rate, "req/s (50 KB template)", api.rate),
               figure("web_preview_p50", web.p50, "ms", api.p50, higher_is_better=False),
               edit]
    if errors:
        figures.append(figure("web_preview_errors", errors, "responses not 200", None))
    return figures


if __name__ == "__main__":
    for row in run():
        print(row)
