"""Instructions per request of the API's send or preview, or of the editor's preview: the
one count a busy machine does not move.

``python -m bench.instructions [send|preview|web_preview|web_preview_edit] [count]`` runs
the requests in one process through the WSGI app, as ``bench.profile inprocess`` does
(``web_preview`` and ``web_preview_edit`` are the requests of bench/web.py's figures: the
editor's preview of the 50 KB template, signed in, the same text each time or a new one),
under valgrind's callgrind
(valgrind itself is not installed by the bench), with counting switched on only around
``count`` requests (300 by default) after 200 of warm-up. The figure is every user-space
instruction of that process (Python, its C modules, the database and Redis clients);
PostgreSQL's and Redis's own work and the kernel's are left out. Under callgrind a request
takes about a hundred times longer, so the per-process caches' answers are kept for the
whole run, as a busy server keeps them between its requests.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from http.cookies import SimpleCookie
from pathlib import Path

from bench.api import bench_tenant
from bench.profile import PATHS

WEB = ("web_preview", "web_preview_edit")


def _child(what: str, count: int) -> None:
    """The measured process: warm up, then ``count`` requests between two handshakes."""
    if what in WEB:
        # A keystroke's text is new whatever came before: a few of them warm the process.
        warm = 200 if what == "web_preview" else 20
        with _editor_calls(what, warm + count) as call:
            _measured(call, count, warm)
        return
    with bench_tenant() as (env, key, body):
        os.environ.update(env)
        from cli.app import create_app
        from engine import runtime
        from engine.observability.log_format import configure_logging

        configure_logging("text")  # as `herald serve` logs, its lines to stderr (discarded)
        app = create_app()
        object.__setattr__(runtime.settings(), "key_cache_seconds", 1e9)
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": PATHS[what][0], "SERVER_NAME": "x",
                   "SERVER_PORT": "80", "wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1",
                   "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
                   "HTTP_X_API_KEY": key, "SERVER_PROTOCOL": "HTTP/1.1"}
        statuses: list[str] = []

        def call() -> None:
            request = {**environ, "wsgi.input": io.BytesIO(body), "wsgi.errors": io.StringIO()}
            for _chunk in app(request, lambda status, *_: statuses.append(status)):
                pass

        _measured(call, count)
        assert all(s.startswith(str(PATHS[what][1])) for s in statuses), set(statuses)


def _measured(call: Callable[[], None], count: int, warm: int = 200) -> None:
    for _ in range(warm):
        call()
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range(count):
        call()
    print("done", flush=True)
    sys.stdin.readline()


@contextlib.contextmanager
def _editor_calls(what: str, calls: int) -> Iterator[Callable[[], None]]:
    """A signed-in editor's preview request of bench/web.py's template, as htmx posts it;
    for ``web_preview_edit`` a new text each of ``calls`` times (made beforehand: the
    client's JSON is not the server's work)."""
    from bench import web
    from bench.common import bench_database_url, bench_env, herald, redis_server

    with redis_server() as redis:
        env = bench_env(bench_database_url(), redis.url, HERALD_PUBLIC_URL="http://x",
                        HERALD_RATE_LIMIT_WEB_PREVIEW="100000000")
        herald(env, "db", "upgrade")
        herald(env, "apply", "-", stdin=json.dumps(web.tenant()))
        invited = json.loads(herald(env, "users", "invite", web.EMAIL, "--workspace", web.WS,
                                    "--role", "member"))
        os.environ.update(env)
        from cli.app import create_app
        from engine import runtime
        from engine.observability.log_format import configure_logging

        configure_logging("text")
        app = create_app()
        # Under callgrind a keystroke's compile outlasts the render budget: its figure
        # would be the refusal's instead of the preview's.
        for name in ("key_cache_seconds", "render_budget_seconds"):
            object.__setattr__(runtime.settings(), name, 1e9)
        cookies: dict[str, str] = {}

        def request(method: str, path: str, body: bytes = b"", **headers: str) -> str:
            environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "SERVER_NAME": "x",
                       "SERVER_PORT": "80", "HTTP_HOST": "x", "wsgi.url_scheme": "http",
                       "REMOTE_ADDR": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1",
                       "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body),
                       "wsgi.errors": io.StringIO(),
                       "HTTP_COOKIE": "; ".join(f"{k}={v}" for k, v in cookies.items()),
                       **headers}
            answer: list = []
            chunks = b"".join(app(environ, lambda status, sent, *_: answer.extend(
                (status, sent))))
            for name, value in answer[1]:
                if name.lower() == "set-cookie":
                    for morsel in SimpleCookie(value).values():
                        cookies[morsel.key] = morsel.value
            if answer[0][:3] not in ("200", "302", "303"):
                raise RuntimeError(f"{method} {path} answered {answer[0]}")
            return chunks.decode()

        invitation = "/" + invited["url"].split("/", 3)[3]
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"',
                          request("GET", invitation)).group(1)
        form = (f"name=Bench&password={web.PASSWORD.replace(' ', '+')}&csrf_token={token}")
        request("POST", invitation, form.encode(),
                CONTENT_TYPE="application/x-www-form-urlencoded")
        editor = request("GET", f"/w/{web.WS}/templates/{web.TPL}")
        csrf = re.search(r'"X-CSRFToken": "([^"]+)"', editor).group(1)
        fields = {"csrf_token": csrf, "basis": "", "subject": "Order {{orderId}} (draft)",
                  "body": web.BODY, "htmlHead": "", "fromAddress": "shop@bench.example",
                  "fromName": "Shop", "emailType": "Transactional",
                  "editor": re.search(r'name="editor" value="([^"]+)"', editor).group(1),
                  "sample": json.dumps(web.TAGS)}
        path = f"/w/{web.WS}/templates/{web.TPL}/preview"
        headers = {"HTTP_HX_REQUEST": "true", "HTTP_X_CSRFTOKEN": csrf,
                   "CONTENT_TYPE": "application/json"}
        first = request("POST", path, json.dumps(fields).encode(), **headers)
        fields["remembered"] = html.unescape(re.search(
            r'name="remembered" id="remembered" value="([^"]*)"', first).group(1))
        bodies = iter([json.dumps(fields).encode()] * calls if what == "web_preview" else [
            json.dumps({**fields, "body": web.BODY + f"<!-- keystroke {n} -->"}).encode()
            for n in range(calls)])

        refused: list[str] = []

        def call() -> None:
            if 'class="template-errors"' in (answer := request("POST", path, next(bodies),
                                                                **headers)):
                refused.append(answer)

        yield call
        if refused:
            raise RuntimeError(f"{len(refused)} previews failed to render: {refused[0]}")


def measure(what: str = "send", count: int = 300) -> int:
    """Instructions per request of ``what``."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        child = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no",
             f"--callgrind-out-file={out}", sys.executable, "-m", "bench.instructions",
             "--child", what, str(count)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        assert child.stdin is not None and child.stdout is not None
        for switch, expected in (("on", "ready"), ("off", "done")):
            line = child.stdout.readline().strip()
            if line != expected:
                raise RuntimeError(f"the measured process said {line!r}")
            subprocess.run(["callgrind_control", "-i", switch, str(child.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            child.stdin.write("\n")
            child.stdin.flush()
        if child.wait() != 0:
            raise RuntimeError("the measured process failed")
        totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
        return int(totals[0].split()[1]) // count


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        _child(argv[1], int(argv[2]))
        return 0
    what = argv[0] if argv else "send"
    count = int(argv[1]) if len(argv) > 1 else 300
    print(f"{what}: {measure(what, count):,} instructions per request")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
