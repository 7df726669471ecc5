"""`send` and `preview` through gunicorn against bare-Flask floors in the same configuration.

Every figure is a ratio of two runs of the same round: the rounds are short (a 2 s run
each) and each runs its endpoints back to back, in one order on even rounds and the reverse
on odd ones, and the round with the median ratio is kept for each figure. This machine's
speed changes by up to a factor of two within a minute; a change then moves one round.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import tempfile
from collections.abc import Callable, Iterator

from bench.common import (
    bench_database_url,
    bench_env,
    children_of,
    figure,
    herald,
    median_pair,
    peak_rss_mb,
    quick,
    redis_server,
    rounds,
    server,
)
from bench.loadgen import LoadResult, run_load

WS = "6f0e4a51-9a57-4c1e-bb0e-5b8f1f3f0a01"
TPL = "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f"
BODY = "<h1>Hello {{name}}</h1>" + "<p>Thanks for your order {{orderId}}.</p>" * 40


def tenant(name: str = "Bench", workspace: str = WS, template: str = TPL,
           template_name: str = "Receipt", body: str = BODY) -> dict:
    """The apply document of one account, workspace, key and published email template."""
    return {"accounts": [{
        "name": name, "plan": "business", "monthlyLimit": 1_000_000_000,
        "senders": {"domains": ["bench.example"]},
        "workspaces": [{"id": workspace, "name": name, "apiKeys": [{"name": "bench"}],
                        "projects": [{"name": "P", "templates": [{
                            "id": template, "name": template_name, "channel": "email",
                            "defaults": {"to": ["buyer@bench.example"]},
                            "versions": [{"status": "published", "subject": "Order {{orderId}}",
                                          "body": body, "fromAddress": "shop@bench.example",
                                          "fromName": "Shop"}]}]}]}]}]}


@contextlib.contextmanager
def bench_tenant() -> Iterator[tuple[dict[str, str], str, bytes]]:
    """The database (recreated), the bench's Redis and its tenant; yields the environment,
    the API key and the body of a send (and a preview) of its template."""
    with redis_server() as redis:
        env = bench_env(bench_database_url(), redis.url)
        herald(env, "db", "upgrade")
        key = json.loads(herald(env, "apply", "-", stdin=json.dumps(tenant())))["apiKeys"][0][
            "key"]
        yield env, key, json.dumps({"tenantId": WS, "templateId": TPL, "tags": [
            {"key": "name", "value": "Ada"}, {"key": "orderId", "value": "A-1001"}]}).encode()


# Seven rounds (thirteen when each figure had rounds of its own): each ratio's two runs are
# seconds apart in every round, and seven of them hold `make bench` within ten minutes.
ROUNDS = rounds(7, 5)

# What a round runs, in this order (reversed on odd rounds): the figures' two sides sit
# next to each other. (name, on the floor app, path, expected status, unique header)
RUNS = (("send_idempotent", False, "/api/v1/notifications/send", 202, "Idempotency-Key"),
        ("send", False, "/api/v1/notifications/send", 202, None),
        ("durable_floor", True, "/enqueue-durable", 202, None),
        ("enqueue_floor", True, "/enqueue", 202, None),
        ("json_floor", True, "/json", 200, None),
        ("preview", False, "/api/v1/notifications/preview", 200, None),
        ("preview_floor", True, "/json-admitted", 200, None))
# The file holding the preview's answer, which the preview's floor answers (bench/floor_app.py).
PREVIEW_ANSWER = "HERALD_BENCH_PREVIEW_ANSWER"
# A quick run measures the figures with targets only.
QUICK_RUNS = ("send", "durable_floor", "preview", "preview_floor")


def _rate(result: LoadResult) -> float:
    return result.rate


def _rounds(load: Callable[[tuple, float], LoadResult]) -> list[dict[str, LoadResult]]:
    """Every round's runs by name."""
    runs = [run for run in RUNS if not quick() or run[0] in QUICK_RUNS]
    measured = []
    for number in range(ROUNDS):
        warm = 1.0 if number == 0 else 0.3
        order = runs if number % 2 == 0 else runs[::-1]
        measured.append({run[0]: load(run, warm) for run in order})
    return measured


def _pair(measured: list[dict[str, LoadResult]], subject: str,
          floor: str) -> tuple[LoadResult, LoadResult] | None:
    """The round with the median ratio of ``subject`` to ``floor``."""
    if subject not in measured[0] or floor not in measured[0]:
        return None
    return median_pair([(runs[subject], runs[floor]) for runs in measured], _rate)


def _answer(port: int, path: str, key: str, request: bytes) -> bytes:
    """The body Herald answers ``request`` with: the preview floor answers the same bytes."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", path, body=request,
                           headers={"X-Api-Key": key, "Content-Type": "application/json"})
        answer = connection.getresponse()
        body = answer.read()
    finally:
        connection.close()
    if answer.status != 200:
        raise RuntimeError(f"{path} answered {answer.status}: {body[:200]!r}")
    return body


@contextlib.contextmanager
def floor_server(env: dict[str, str], port: int, key: str,
                 request: bytes) -> Iterator[tuple[int, int]]:
    """The floors' server (bench/floor_app.py), its preview floor answering the bytes
    Herald's server on ``port`` answers ``request`` with; yields its port and pid."""
    with tempfile.NamedTemporaryFile(suffix=".json") as answer:
        answer.write(_answer(port, "/api/v1/notifications/preview", key, request))
        answer.flush()
        with server("bench.floor_app:app", {**env, PREVIEW_ANSWER: answer.name}) as started:
            yield started


def run(seconds: float = 2.0) -> list[dict]:
    with bench_tenant() as (env, key, request):
        database_url = env["HERALD_DATABASE_URL"]
        with server("cli.app:create_app", env) as (port, pid):
            with floor_server(env, port, key, request) as (floor_port, _):

                def load(run: tuple, warm: float) -> LoadResult:
                    # Floors and subjects read the same request (body and key header).
                    _name, on_floor, path, expect, unique = run
                    return run_load("127.0.0.1", floor_port if on_floor else port, path,
                                    method="POST", body=request, headers={"X-Api-Key": key},
                                    expect=expect, seconds=seconds, warmup=warm,
                                    unique_header=unique)

                measured = _rounds(load)

            rss = max((peak_rss_mb(child) for child in children_of(pid)), default=0.0)

    db_name = "postgresql" if database_url.startswith("postgres") else "sqlite"
    figures: list[dict] = []
    if pair := _pair(measured, "send", "durable_floor"):
        send, floor = pair
        figures.append(figure("send", send.rate, f"req/s ({db_name}; floor: one row "
                              "committed, one enqueue)", floor.rate))
        figures.append(figure("send_p50", send.p50, "ms", floor.p50, higher_is_better=False))
        figures.append(figure("send_p99", send.percentile(99), "ms", floor.percentile(99),
                              higher_is_better=False))
    for name, subject, floor_name, unit in (
            ("send_vs_enqueue", "send", "enqueue_floor", "req/s (floor: Flask, one enqueue)"),
            ("send_idempotent", "send_idempotent", "send", "req/s (floor: send)"),
            ("durable_floor", "durable_floor", "enqueue_floor",
             "req/s (floor: Flask, one enqueue; no Herald code)"),
            ("preview", "preview", "preview_floor", "req/s (floor: one Redis script, JSON)"),
            ("preview_vs_json", "preview", "json_floor", "req/s (floor: Flask, JSON)")):
        if pair := _pair(measured, subject, floor_name):
            figures.append(figure(name, pair[0].rate, unit, pair[1].rate))
    figures.append(figure("rss_api", rss, "MiB", None))
    errors = sum(r.errors for runs in measured for r in runs.values())
    if errors:
        figures.append(figure("api_errors", errors, "responses not 2xx", None))
    return figures


if __name__ == "__main__":
    for row in run():
        print(row)
