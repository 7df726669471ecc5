"""healthz_p99_during_hostile_previews_ms: what eight hostile editor previews at once cost the
server's other requests. One signed-in Member posts eight previews at a time, again and again
for a few seconds, each a 1 MB body of 100,000 tags with 8 KB sample values (the attack of
docs/web.md, "Security"), to `herald serve`'s gunicorn (2 workers x 4 threads); meanwhile
`/healthz` is asked every 50 ms on a connection of its own. The figure is the p99 of those
`/healthz` answers, with the Member's per-minute preview limit as deployed (60); its floor
is the same probe with no preview running. Target: under 100 ms.
`healthz_p99_during_unlimited_hostile_previews_ms` is the same with that limit lifted: what
the render slots alone hold. `python -m bench attack` runs both.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from bench.common import figure
from bench.web import editor_bench

AT_ONCE = 8
SECONDS = 6.0
PROBE_EVERY = 0.05


def _hostile(form: dict) -> bytes:
    body = "".join(f"<p>{{{{t{i % 100}}}}}</p>" for i in range(100_000))[:1_000_000]
    sample = json.dumps({f"t{i}": "v" * 8000 for i in range(100)})
    return json.dumps({**form, "body": body, "sample": sample}).encode()


def _probe(port: int, stop: threading.Event) -> list[float]:
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


def _previews(port: int, path: str, body: bytes, headers: dict, until: float) -> list[int]:
    """Each preview's status; 0 where the server closed the connection (a 429 answered
    before the body was read may close it), which the attacker then opens again."""
    statuses = []
    while time.monotonic() < until:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            statuses.append(response.status)
        except (ConnectionError, http.client.HTTPException):
            statuses.append(0)
        finally:
            conn.close()
    return statuses


def _measured(port: int, work: callable) -> list[float]:
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        probe = pool.submit(_probe, port, stop)
        try:
            work()
        finally:
            stop.set()
        return probe.result()


def run() -> list[dict]:
    return [_figure(limited=True, name="healthz_p99_during_hostile_previews_ms"),
            _figure(limited=False, name="healthz_p99_during_unlimited_hostile_previews_ms")]


def _figure(*, limited: bool, name: str) -> dict:
    with editor_bench(limited=limited) as bench:
        body = _hostile(bench.form)
        quiet = _measured(bench.port, lambda: time.sleep(SECONDS))
        statuses: list[int] = []

        def attack() -> None:
            until = time.monotonic() + SECONDS
            with ThreadPoolExecutor(AT_ONCE) as pool:
                for found in pool.map(lambda _: _previews(bench.port, bench.path, body,
                                                          bench.headers, until),
                                      range(AT_ONCE)):
                    statuses.extend(found)

        busy = _measured(bench.port, attack)
    answered = {s: statuses.count(s) for s in sorted(set(statuses))}
    return figure(name, _p99(busy), f"ms, /healthz p99 (previews answered {answered})",
                  _p99(quiet), higher_is_better=False)


if __name__ == "__main__":
    for row in run():
        print(row)
