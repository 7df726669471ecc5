"""`send` and `preview` through gunicorn against bare-Flask floors in the same configuration."""

from __future__ import annotations

import json

from bench.common import (
    bench_database_url,
    bench_env,
    children_of,
    figure,
    herald,
    peak_rss_mb,
    redis_server,
    server,
)
from bench.loadgen import LoadResult, run_load

WS = "6f0e4a51-9a57-4c1e-bb0e-5b8f1f3f0a01"
TPL = "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f"
BODY = "<h1>Hello {{name}}</h1>" + "<p>Thanks for your order {{orderId}}.</p>" * 40


def tenant() -> dict:
    return {"accounts": [{
        "name": "Bench", "plan": "business", "monthlyLimit": 1_000_000_000,
        "senders": {"domains": ["bench.example"]},
        "workspaces": [{"id": WS, "name": "Bench", "apiKeys": [{"name": "bench"}],
                        "projects": [{"name": "P", "templates": [{
                            "id": TPL, "name": "Receipt", "channel": "email",
                            "defaults": {"to": ["buyer@bench.example"]},
                            "versions": [{"status": "published", "subject": "Order {{orderId}}",
                                          "body": BODY, "fromAddress": "shop@bench.example",
                                          "fromName": "Shop"}]}]}]}]}]}


ROUNDS = 5


def _median_round(rounds: list[tuple[LoadResult, LoadResult]]) -> tuple[LoadResult, LoadResult]:
    ordered = sorted(rounds, key=lambda pair: pair[0].rate / pair[1].rate if pair[1].rate
                     else 0.0)
    return ordered[len(ordered) // 2]


def run(seconds: float = 4.0) -> list[dict]:
    figures: list[dict] = []
    database_url = bench_database_url()
    with redis_server() as redis:
        env = bench_env(database_url, redis.url)
        herald(env, "db", "upgrade")
        key = json.loads(herald(env, "apply", "-", stdin=json.dumps(tenant())))["apiKeys"][0][
            "key"]
        request = json.dumps({"tenantId": WS, "templateId": TPL, "tags": [
            {"key": "name", "value": "Ada"}, {"key": "orderId", "value": "A-1001"}]}).encode()
        headers = {"X-Api-Key": key}

        send_rounds, preview_rounds = [], []
        with server("bench.floor_app:app", env) as (floor_port, _), \
                server("api.app:create_app", env) as (port, pid):
            # Floor and subject alternate, a short run each, so that a burst of noise on
            # this shared machine moves one round; the round with the median ratio is kept.
            for number in range(ROUNDS):
                warm = 2.0 if number == 0 else 0.5
                floor_send = run_load("127.0.0.1", floor_port, "/enqueue", method="POST",
                                      body=b"{}", expect=202, seconds=seconds, warmup=warm)
                send = run_load("127.0.0.1", port, "/api/v1/notifications/send",
                                method="POST", body=request, headers=headers, expect=202,
                                seconds=seconds, warmup=warm)
                floor_json = run_load("127.0.0.1", floor_port, "/json", method="POST",
                                      body=b"{}", seconds=seconds, warmup=warm)
                preview = run_load("127.0.0.1", port, "/api/v1/notifications/preview",
                                   method="POST", body=request, headers=headers,
                                   seconds=seconds, warmup=warm)
                send_rounds.append((send, floor_send))
                preview_rounds.append((preview, floor_json))
            rss = max((peak_rss_mb(child) for child in children_of(pid)), default=0.0)
        send, floor_send = _median_round(send_rounds)
        preview, floor_json = _median_round(preview_rounds)

    db_name = "postgresql" if database_url.startswith("postgres") else "sqlite"
    figures.append(figure("send", send.rate, f"req/s ({db_name})", floor_send.rate))
    figures.append(figure("send_p50", send.p50, "ms", floor_send.p50, higher_is_better=False))
    figures.append(figure("send_p99", send.percentile(99), "ms", floor_send.percentile(99),
                          higher_is_better=False))
    figures.append(figure("preview", preview.rate, "req/s", floor_json.rate))
    figures.append(figure("rss_api", rss, "MiB", None))
    errors = sum(r.errors for pair in send_rounds + preview_rounds for r in pair)
    if errors:
        figures.append(figure("api_errors", errors, "responses not 2xx", None))
    return figures


if __name__ == "__main__":
    for row in run():
        print(row)
