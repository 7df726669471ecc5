"""healthz_p99_during_hostile_previews_ms: what eight hostile editor previews at once cost the
server's other requests. One signed-in Member posts eight previews at a time, again and again
for a few seconds, each a 1 MB body of 100,000 tags with 8 KB sample values (the attack of
docs/web.md, "Security"), to `herald serve`'s gunicorn (2 workers x 4 threads); meanwhile
`/healthz` is asked every 50 ms on a connection of its own. The figure is the p99 of those
`/healthz` answers, with the Member's per-minute preview limit as deployed (60); its floor
is the same probe with no preview running. Each figure is the median of WINDOWS windows'
p99s (HERALD_BENCH_ATTACK_WINDOWS, 5), its floor the median of as many quiet windows of
two seconds, each just before an attack window: on a loaded machine judge the attack
minus the floor.
Target: under 100 ms.
`healthz_p99_during_unlimited_hostile_previews_ms` is the same with that limit lifted: what
the render slots alone hold.

Two more attacks of the same run, each with its own floor: an Admin posts `Send test
event` eight at a time to a callback URL whose server accepts and never answers
(`healthz_p99_during_hanging_callback_tests_ms`), and a Member uploads eight random
10 MB, 50,000-row lists at a time (`healthz_p99_during_list_uploads_ms`). The probe runs in
a process of its own, as an orchestrator's does: in the attackers' process it would wait
for their threads' interpreter lock and measure the bench. `python -m bench attack` runs
all four.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import multiprocessing
import os
import random
import re
import socket
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

from bench.common import bench_database_url, bench_env, figure, herald, redis_server, server
from bench.web import PASSWORD, TPL, WS, Browser, editor_bench, tenant

AT_ONCE = 8
SECONDS = float(os.environ.get("HERALD_BENCH_ATTACK_SECONDS", "6"))  # less: a smoke run
# A six-second window's p99 is its worst one or two answers: one window swings several
# times over between runs of the same tree. The median of several windows does not.
WINDOWS = int(os.environ.get("HERALD_BENCH_ATTACK_WINDOWS", "5"))
# A quiet window's p99 is a few milliseconds whatever its length (nothing else runs): two
# seconds (40 probes) tell it, and keep the four attacks' twenty quiet windows within
# `make bench`'s ten minutes.
QUIET_SECONDS = min(SECONDS, 2.0)
PROBE_EVERY = 0.05


def _hostile(form: dict) -> bytes:
    body = "".join(f"<p>{{{{t{i % 100}}}}}</p>" for i in range(100_000))[:1_000_000]
    sample = json.dumps({f"t{i}": "v" * 8000 for i in range(100)})
    return json.dumps({**form, "body": body, "sample": sample}).encode()


def _probe(port: int, stop) -> list[float]:  # type: ignore[no-untyped-def]
    """Milliseconds of each /healthz answer until ``stop``, a connection each, as a
    probe of an orchestrator makes them."""
    times = []
    while not stop.is_set():
        start = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", "/healthz", headers={"Connection": "close"})
        conn.getresponse().read()
        conn.close()
        times.append((time.perf_counter() - start) * 1000)
        time.sleep(PROBE_EVERY)
    return times


def _p99(times: list[float]) -> float:
    return statistics.quantiles(times, n=100)[98] if len(times) > 1 else times[0]


def _post(port: int, path: str, body: bytes, headers: dict) -> int:
    """One POST on a connection of its own: the answer's status, 0 when none came. A
    refusal answered before the body is read closes the connection while the body is
    still going out: the answer is read all the same, as a browser does."""
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    except OSError:
        return 0
    try:
        with contextlib.suppress(OSError):
            sock.sendall(head + body)
        response = http.client.HTTPResponse(sock)
        response.begin()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException):
        return 0
    finally:
        sock.close()


def _probe_into(port: int, stop, ready, out) -> None:  # type: ignore[no-untyped-def]
    """The probe's process: one answer first (then ``ready``), the rest until ``stop``."""
    first = _probe_once(port)
    ready.set()
    out.send([first, *_probe(port, stop)])


def _probe_once(port: int) -> float:
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/healthz", headers={"Connection": "close"})
    conn.getresponse().read()
    conn.close()
    return (time.perf_counter() - start) * 1000


def _measured(port: int, work: Callable[[], None]) -> list[float]:
    """/healthz times from a process of its own while ``work`` runs in this one."""
    ctx = multiprocessing.get_context("spawn")
    stop, ready = ctx.Event(), ctx.Event()
    received, sent = ctx.Pipe(duplex=False)
    probe = ctx.Process(target=_probe_into, args=(port, stop, ready, sent), daemon=True)
    probe.start()
    try:
        if not ready.wait(60):
            raise RuntimeError("the /healthz probe never answered")
        work()
    finally:
        stop.set()
    times = received.recv()
    probe.join(30)
    return times


def run() -> list[dict]:
    return [_figure(limited=True, name="healthz_p99_during_hostile_previews_ms"),
            _figure(limited=False, name="healthz_p99_during_unlimited_hostile_previews_ms"),
            callback_figure(), list_figure()]


def _burst(port: int, path: str, body: bytes, headers: dict) -> dict[int, int]:
    """AT_ONCE attackers, each posting again as soon as answered, for SECONDS: how many
    answers of each status (0: none came)."""
    until = time.monotonic() + SECONDS

    def attacker(_: int) -> list[int]:
        statuses = []
        while time.monotonic() < until:
            statuses.append(_post(port, path, body, headers))
        return statuses

    with ThreadPoolExecutor(AT_ONCE) as pool:
        found = [s for got in pool.map(attacker, range(AT_ONCE)) for s in got]
    return {s: found.count(s) for s in sorted(set(found))}


def _attack_figure(name: str, port: int, path: str, body: bytes, headers: dict,
                   what: str) -> dict:
    """/healthz's p99 through AT_ONCE attackers posting ``body``, the median over WINDOWS
    windows; floor: the median p99 of as many shorter windows with nothing else, each measured
    just before its attack window on the same server (a loaded machine moves both)."""
    quiet, busy = [], []
    answered: dict[int, int] = {}

    def attack() -> None:
        for status, count in _burst(port, path, body, headers).items():
            answered[status] = answered.get(status, 0) + count

    for _ in range(WINDOWS):
        quiet.append(_p99(_measured(port, lambda: time.sleep(QUIET_SECONDS))))
        busy.append(_p99(_measured(port, attack)))
    value, floor = statistics.median(busy), statistics.median(quiet)
    return figure(name, value, f"ms, /healthz p99, median of {WINDOWS} windows of "
                  f"{SECONDS:g} s (each {_ms(busy)}; floor's {_ms(quiet)}; attack minus "
                  f"floor {value - floor:.1f} ms; {what} answered {answered})", floor,
                  higher_is_better=False)


def _ms(values: list[float]) -> str:
    return "/".join(f"{v:.0f}" for v in values)


@contextlib.contextmanager
def _hanging_server() -> Iterator[int]:
    """A server that accepts connections and never answers (not even TLS's handshake)."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=512)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not done.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()


def _csrf(page: str) -> str:
    return re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)  # type: ignore[union-attr]


def callback_figure() -> dict:
    """Finding 1: eight `Send test event` at a time to a receiver that never answers."""
    with redis_server() as redis, _hanging_server() as hanging:
        env = bench_env(bench_database_url(), redis.url,
                        HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS="true")
        herald(env, "db", "upgrade")
        herald(env, "apply", "-", stdin=json.dumps(tenant()))
        with server("cli.app:create_app", env) as (port, _):
            browser = _admin(env, port)
            path = f"/w/{WS}/settings/callbacks"
            status, page, _ = browser.request("GET", path)
            token = _csrf(page)
            status, _, _ = browser.request("POST", path, {
                "callback_url": f"https://127.0.0.1:{hanging}/herald", "csrf_token": token})
            if status != 303 and status != 302:
                raise RuntimeError(f"the callback URL was not saved ({status})")
            headers = {"Cookie": browser.cookie_header(),
                       "Content-Type": "application/x-www-form-urlencoded"}
            return _attack_figure("healthz_p99_during_hanging_callback_tests_ms", port,
                                  f"{path}/test", f"csrf_token={token}".encode(), headers,
                                  "test events")


def _admin(env: dict, port: int) -> Browser:
    """An Admin of the bench's workspace, signed in through an invitation."""
    invited = json.loads(herald(env, "users", "invite", "bench-admin@bench.example",
                                "--workspace", WS, "--role", "admin"))
    path = "/" + invited["url"].split("/", 3)[3]
    browser = Browser(port)
    _, page, _ = browser.request("GET", path)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    status, _, _ = browser.request("POST", path, {"name": "Admin", "password": PASSWORD,
                                                  "csrf_token": token})
    if status != 302:
        raise RuntimeError(f"could not accept the invitation ({status})")
    return browser


def _random_list(rows: int = 50_000, size: int = 10_000_000) -> bytes:
    """A CSV of ``rows`` recipients padded with random text to ``size`` bytes."""
    pad = max(1, (size - rows * 40) // rows)
    letters = "abcdefghijklmnopqrstuvwxyz"
    lines = ["email address,name,note"]
    lines += [f"r{i}-{uuid.uuid4().hex[:8]}@example.net,Person {i},"
              + "".join(random.choices(letters, k=pad)) for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()[:size]


def list_figure() -> dict:
    """Finding 3: a Member's eight 10 MB list uploads at a time."""
    data = _random_list()
    data = data[:data.rfind(b"\n") + 1]
    boundary = uuid.uuid4().hex
    with editor_bench(limited=True) as bench:
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"recipients\"; "
                f"filename=\"list.csv\"\r\nContent-Type: text/csv\r\n\r\n").encode() + data + \
            f"\r\n--{boundary}--\r\n".encode()
        headers = {"Cookie": bench.headers["Cookie"], "X-CSRFToken": bench.headers["X-CSRFToken"],
                   "Content-Type": f"multipart/form-data; boundary={boundary}"}
        return _attack_figure("healthz_p99_during_list_uploads_ms", bench.port,
                              f"/w/{WS}/templates/{TPL}/lists", body, headers, "uploads")


def _figure(*, limited: bool, name: str) -> dict:
    """Finding 8: eight hostile previews at a time."""
    with editor_bench(limited=limited) as bench:
        return _attack_figure(name, bench.port, bench.path, _hostile(bench.form),
                              bench.headers, "previews")


if __name__ == "__main__":
    for row in run():
        print(row)
