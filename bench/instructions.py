"""Instructions per request of the API's send or preview, or of the editor's preview: the
one count a busy machine does not move.

``python -m bench.instructions [send|send_idempotent|preview|web_preview|web_preview_edit]
[count]`` runs the requests in one process through the WSGI app, as ``bench.profile
inprocess`` does
(``web_preview`` and ``web_preview_edit`` are the requests of bench/web.py's figures: the
editor's preview of the 50 KB template, signed in, the same text each time or a new one;
``durable_floor``, ``enqueue_floor``, ``preview_floor`` and ``json_floor`` send the API's
request to its figures' floors, bench/floor_app.py; ``send_idempotent`` is the send with an
``Idempotency-Key`` of its own each time), under valgrind's callgrind
(valgrind itself is not installed by the bench), with counting switched on only around
``count`` requests (300 by default) after 200 of warm-up. The figure is every user-space
instruction of that process (Python, its C modules, the database and Redis clients);
PostgreSQL's and Redis's own work and the kernel's are left out. Under callgrind a request
takes about a hundred times longer, so the per-process caches' answers are kept for the
whole run, as a busy server keeps them between its requests.

``python -m bench.instructions fanout [count]`` counts a worker's instead: one real
``herald worker`` process (``python -m engine.worker.worker``, its defaults) under callgrind
delivers one Marketing send to ``count`` recipients (1,000 by default; one message each, open
and click tracking, one-click unsubscribe: bench/delivery.py's ``marketing_fanout``) into
bench/smtp_sink.py in a process of its own. A fan-out of 100 recipients first warms the
process (its imports, its SMTP connections); counting is switched on just before the
measured send is enqueued and off once the sink has every message and the row is
delivered. Every thread of the worker is counted (RQ's, the delivery slots', the lanes', the
reader's, the periodic loops'). ``smtp_floor [count]`` counts bench/smtp_floor.py's client
(4 threads, one prebuilt message) into the same sink. Both print instructions per message
and context switches per message; with ``--native`` they run without callgrind and print
the context switches only (under callgrind those are callgrind's own).
Under callgrind the worker runs some fifty times slower: what it does by the clock (a
checkpoint at least every second, RQ's heartbeat, the lease's renewal) comes more often a
message than on a real machine, so the count leans high, never low.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

from bench.api import bench_tenant
from bench.profile import PATHS

WEB = ("web_preview", "web_preview_edit")
# The API figures' floors (bench/api.py), by their names there: endpoint, status.
FLOORS = {"durable_floor": ("/enqueue-durable", 202), "enqueue_floor": ("/enqueue", 202),
          "preview_floor": ("/json-admitted", 200), "json_floor": ("/json", 200)}
WORKER = ("fanout", "smtp_floor")
FANOUT_WARM = 100


def _child(what: str, count: int) -> None:
    """The measured process: warm up, then ``count`` requests between two handshakes."""
    # A keystroke's text is new whatever came before: a few of them warm the process.
    warm = 20 if what == "web_preview_edit" else 200
    with request_calls(what, warm + count) as call:
        _measured(call, count, warm)


@contextlib.contextmanager
def logs_to_nowhere() -> Iterator[None]:
    """The process's log lines written to the null device for the block, as
    `bench.profile inprocess` writes them: what a write costs depends on where the
    server's stderr goes, not on Herald. Call inside ``request_calls``, which sets the
    logging up."""
    with open(os.devnull, "w") as nowhere:
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler):
                handler.setStream(nowhere)
        yield


@contextlib.contextmanager
def request_calls(what: str, calls: int) -> Iterator[Callable[[], None]]:
    """A function that makes one request of ``what`` through the WSGI app in this process,
    set up as its figure sets it up (its tenant, key and body, or its signed-in editor); at
    most ``calls`` of them. Every answer is checked once the block ends."""
    if what in WEB:
        with _editor_calls(what, calls) as call:
            yield call
        return
    with bench_tenant() as (env, key, body):
        os.environ.update(env)
        from cli.app import create_app
        from engine import runtime
        from engine.observability.log_format import configure_logging

        configure_logging("text")  # as `herald serve` logs, its lines to stderr (discarded)
        if what in FLOORS:  # the same request to the floor's endpoint (bench/floor_app.py)
            from bench.floor_app import app
        else:
            app = create_app()
            object.__setattr__(runtime.settings(), "key_cache_seconds", 1e9)
        keyed = what == "send_idempotent"  # a send with a fresh Idempotency-Key each time
        path, expected = FLOORS.get(what) or PATHS["send" if keyed else what]
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": path, "SERVER_NAME": "x",
                   "SERVER_PORT": "80", "wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1",
                   "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
                   "HTTP_X_API_KEY": key, "SERVER_PROTOCOL": "HTTP/1.1"}
        statuses: list[str] = []

        keys = (f"bench-{number}" for number in range(calls))

        def call() -> None:
            request = {**environ, "wsgi.input": io.BytesIO(body), "wsgi.errors": io.StringIO()}
            if keyed:
                request["HTTP_IDEMPOTENCY_KEY"] = next(keys)
            for _chunk in app(request, lambda status, *_: statuses.append(status)):
                pass

        yield call
        assert all(s.startswith(str(expected)) for s in statuses), set(statuses)


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


def _switch(pid: int, on: bool) -> None:
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(pid)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _totals(out: Path) -> int:
    """The instructions of every thread of the process whose files start with ``out``
    (``--separate-threads=yes``: one file a thread, ``-01`` its main thread)."""
    total = 0
    for part in sorted(out.parent.glob(out.name + "*")):
        if keep := os.environ.get("HERALD_BENCH_CALLGRIND_OUT"):  # for callgrind_annotate
            Path(keep + part.name.removeprefix(out.name)).write_bytes(part.read_bytes())
        total += sum(int(line.split()[1]) for line in part.read_text().splitlines()
                     if line.startswith("totals:"))
    return total


def _enqueue_fanout(env: dict[str, str], count: int, tag: str) -> str:
    """A Marketing send to ``count`` recipients as bench/delivery.py enqueues it: its id."""
    import uuid

    from config.settings import load_settings
    from engine import runtime
    from engine.database.db import database
    from engine.database.models import Notification
    from engine.delivery.queue import enqueue_notification
    from tests import factories

    runtime.configure(load_settings(env))
    database.connect(reuse_if_open=True)
    ws = factories.workspace()
    payload = factories.email_payload(
        emailType="Marketing", trackOpens=True, trackClicks=True,
        to=[f"{tag}{i}@example.net" for i in range(count)])
    row = Notification.create(account=ws.account_id, workspace=ws, version_number=1,
                              channel="email", correlation_id="bench",
                              delivery_id=str(uuid.uuid4()), payload=payload)
    database.close()
    enqueue_notification(str(row.id), bulk=True, workspace=ws.id)
    return str(row.id)


def _settled(notification_id: str) -> bool:
    from engine.database.db import database
    from engine.database.models import Notification

    with database.connection_context():
        return Notification.get_by_id(notification_id).status == "delivered"


def _count_worker(what: str, count: int, native: bool = False) -> tuple[int, dict[str, int]]:
    """Instructions of the worker's (or the bare client's) process while it sends ``count``
    messages into bench/smtp_sink.py (0 when ``native``: no callgrind), and its context
    switches then (from /proc; under callgrind, which runs one thread at a time and
    switches between them itself, they are callgrind's, not the process's)."""
    from bench.common import ROOT, bench_database_url, bench_env, herald, redis_server, stop_worker
    from bench.fairness import Sink

    with tempfile.TemporaryDirectory() as scratch, redis_server() as redis:
        out = Path(scratch) / "callgrind.out"
        env = bench_env(bench_database_url(), redis.url)
        # The lists' pass (a job every 5 s, engine/worker/list_sweep.py) is no part of a
        # fan-out, and under callgrind a fan-out lasts long enough for several: its lock,
        # held here, tells the worker another worker has just enqueued it.
        from redis import Redis

        from engine.worker.list_sweep import LOCK_KEY

        Redis.from_url(redis.url).set(LOCK_KEY, "1")
        herald(env, "db", "upgrade")
        sink = Sink(env)
        env["HERALD_EMAIL_PROVIDER"] = f"smtp://127.0.0.1:{sink.port}?tls=none"
        # One file a process: RQ's scheduler is a process forked from the worker's.
        valgrind = [] if native else [
            "valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes",
            f"--callgrind-out-file={out}.%p"]
        switch = (lambda pid, on: None) if native else _switch
        totals = (lambda path: 0) if native else _totals
        try:
            if what == "smtp_floor":
                child = subprocess.Popen(
                    [*valgrind, sys.executable, "-m", "bench.instructions", "--child", what,
                     str(count), str(sink.port)], env=env, cwd=ROOT, stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                assert child.stdin is not None and child.stdout is not None
                switches = _Switches(child.pid)
                for expected in ("ready", "done"):
                    if child.stdout.readline().strip() != expected:
                        raise RuntimeError("the measured client failed")
                    if expected == "ready":
                        switches.start()
                    switch(child.pid, expected == "ready")
                    child.stdin.write("\n")
                    child.stdin.flush()
                counted = switches.stop()
                if child.wait() != 0:
                    raise RuntimeError("the measured client failed")
                return totals(Path(f"{out}.{child.pid}")), counted
            child = subprocess.Popen([*valgrind, sys.executable, "-m", "engine.worker.worker"],
                                     env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                _fan_out(env, sink, FANOUT_WARM, "warm")
                switches = _Switches(child.pid)
                switches.start()
                switch(child.pid, True)
                _fan_out(env, sink, count, "user")
                switch(child.pid, False)
                counted = switches.stop()
            finally:
                stop_worker(child)
            return totals(Path(f"{out}.{child.pid}")), counted
        finally:
            sink.stop()


def _fan_out(env: dict[str, str], sink: Any, count: int, tag: str) -> None:
    """Enqueue a fan-out to ``count`` recipients and wait for its every message and its
    outcome."""
    import time

    row = _enqueue_fanout(env, count, tag)
    with sink.arrived:
        if not sink.arrived.wait_for(
                lambda: sum(a.startswith(tag) for a in sink.at) >= count, 3600):
            raise RuntimeError(f"the {tag} fan-out did not arrive")
    while not _settled(row):
        time.sleep(0.2)


class _Switches:
    """Context switches of every thread of a process between ``start`` and ``stop``, read
    from /proc every 20 ms: a thread that ends in between (a fan-out's lanes, the bare
    client's threads) keeps the count it last showed."""

    def __init__(self, pid: int) -> None:
        import threading

        self.pid = pid
        self.before: dict[str, tuple[int, int]] = {}
        self.last: dict[str, tuple[int, int]] = {}
        self.done = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)

    def _sample(self) -> dict[str, tuple[int, int]]:
        found = {}
        for status in Path(f"/proc/{self.pid}/task").glob("*/status"):
            with contextlib.suppress(OSError, ValueError):
                fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
                found[status.parent.name] = (int(fields["voluntary_ctxt_switches"]),
                                             int(fields["nonvoluntary_ctxt_switches"]))
        return found

    def _read(self) -> None:
        while not self.done.wait(0.02):
            self.last.update(self._sample())

    def start(self) -> None:
        self.before = self._sample()
        self.reader.start()

    def stop(self) -> dict[str, int]:
        self.done.set()
        self.reader.join()
        self.last.update(self._sample())
        counts = [(v - self.before.get(t, (0, 0))[0], n - self.before.get(t, (0, 0))[1])
                  for t, (v, n) in self.last.items()]
        return {"voluntary": sum(c[0] for c in counts),
                "nonvoluntary": sum(c[1] for c in counts)}


def _floor_child(count: int, port: int) -> None:
    """bench/smtp_floor.py's work: 4 threads, one connection each, one prebuilt message."""
    import smtplib
    import threading

    from bench.smtp_floor import MESSAGE

    clients = [smtplib.SMTP("127.0.0.1", port) for _ in range(4)]

    def run(client: smtplib.SMTP, messages: int) -> None:
        for _ in range(messages):
            client.sendmail("a@example.com", ["b@example.net"], MESSAGE)

    def burst(messages: int) -> None:
        threads = [threading.Thread(target=run, args=(c, messages // 4)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    _measured(lambda: burst(count), 1, warm=1)
    for client in clients:
        client.quit()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        if argv[1] == "smtp_floor":
            _floor_child(int(argv[2]), int(argv[3]))
        else:
            _child(argv[1], int(argv[2]))
        return 0
    native = "--native" in argv
    argv = [a for a in argv if a != "--native"]
    what = argv[0] if argv else "send"
    if what in WORKER:
        count = int(argv[1]) if len(argv) > 1 else 1000
        total, switches = _count_worker(what, count, native)
        counted = "" if native else (f"{total // count:,} instructions per message "
                                     f"({total:,} for {count}); ")
        print(f"{what}: {counted}context switches a message: "
              + ", ".join(f"{k} {v / count:.2f}" for k, v in switches.items()))
        return 0
    count = int(argv[1]) if len(argv) > 1 else 300
    print(f"{what}: {measure(what, count):,} instructions per request")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
