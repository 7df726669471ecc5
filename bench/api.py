"""`send` and `preview` through gunicorn against bare-Flask floors in the same configuration."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from bench.common import (
    bench_database_url,
    bench_env,
    children_of,
    figure,
    herald,
    median_pair,
    paired,
    peak_rss_mb,
    redis_server,
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


# Thirteen pairs (nine until the ninth round): the median of more pairs moves less with a
# noisy minute; the API figures take about five to eight minutes.
ROUNDS = 13


def _rate(result: LoadResult) -> float:
    return result.rate


def run(seconds: float = 2.0) -> list[dict]:
    figures: list[dict] = []
    with bench_tenant() as (env, key, request):
        database_url = env["HERALD_DATABASE_URL"]
        headers = {"X-Api-Key": key}

        send_rounds, preview_rounds, idempotent_rounds, durable_rounds = [], [], [], []
        floor_rounds: list[tuple[LoadResult, LoadResult]] = []
        with server("bench.floor_app:app", env) as (floor_port, _), \
                server("cli.app:create_app", env) as (port, pid):
            # Floor and subject alternate, a short run each, so that a burst of noise on
            # this shared machine (its speed changes by up to a factor of two within a
            # minute) moves one round; the round with the median ratio is kept.
            for number in range(ROUNDS):
                warm = 2.0 if number == 0 else 0.3

                def load(target_port: int, path: str, body: bytes, expect: int = 200,
                         extra: dict | None = None, warm: float = warm,
                         unique: str | None = None) -> LoadResult:
                    return run_load("127.0.0.1", target_port, path, method="POST", body=body,
                                    headers=extra, expect=expect, seconds=seconds,
                                    warmup=warm, unique_header=unique)

                send_rounds.append(paired(
                    lambda: load(floor_port, "/enqueue", b"{}", 202),
                    lambda: load(port, "/api/v1/notifications/send", request, 202, headers),
                    number))
                preview_rounds.append(paired(
                    lambda: load(floor_port, "/json", b"{}"),
                    lambda: load(port, "/api/v1/notifications/preview", request, 200,
                                 headers), number))
                # The send against a floor that also commits a row before its 202.
                durable_rounds.append(paired(
                    lambda: load(floor_port, "/enqueue-durable", b"{}", 202),
                    lambda: load(port, "/api/v1/notifications/send", request, 202, headers),
                    number))
                # The two floors against each other: what committing its row costs an
                # endpoint with nothing else to do, the most any durable send can reach.
                floor_rounds.append(paired(
                    lambda: load(floor_port, "/enqueue", b"{}", 202),
                    lambda: load(floor_port, "/enqueue-durable", b"{}", 202), number))
                # A send with a fresh Idempotency-Key each time, against the plain send.
                idempotent_rounds.append(paired(
                    lambda: load(port, "/api/v1/notifications/send", request, 202, headers),
                    lambda: load(port, "/api/v1/notifications/send", request, 202, headers,
                                 unique="Idempotency-Key"), number))
            rss = max((peak_rss_mb(child) for child in children_of(pid)), default=0.0)
        send, floor_send = median_pair(send_rounds, _rate)
        preview, floor_json = median_pair(preview_rounds, _rate)
        idempotent, plain_send = median_pair(idempotent_rounds, _rate)
        durable_send, floor_durable = median_pair(durable_rounds, _rate)
        durable_floor, plain_floor = median_pair(floor_rounds, _rate)

    db_name = "postgresql" if database_url.startswith("postgres") else "sqlite"
    figures.append(figure("send", send.rate, f"req/s ({db_name})", floor_send.rate))
    figures.append(figure("send_p50", send.p50, "ms", floor_send.p50, higher_is_better=False))
    figures.append(figure("send_p99", send.percentile(99), "ms", floor_send.percentile(99),
                          higher_is_better=False))
    figures.append(figure("send_idempotent", idempotent.rate, "req/s (floor: send)",
                          plain_send.rate))
    figures.append(figure("send_durable", durable_send.rate,
                          "req/s (floor: Flask, one INSERT committed, one enqueue)",
                          floor_durable.rate))
    figures.append(figure("durable_floor", durable_floor.rate,
                          "req/s (floor: the send's floor; no Herald code)", plain_floor.rate))
    figures.append(figure("preview", preview.rate, "req/s", floor_json.rate))
    figures.append(figure("rss_api", rss, "MiB", None))
    errors = sum(r.errors for pair in send_rounds + preview_rounds + idempotent_rounds
                 + durable_rounds + floor_rounds for r in pair)
    if errors:
        figures.append(figure("api_errors", errors, "responses not 2xx", None))
    return figures


if __name__ == "__main__":
    for row in run():
        print(row)
