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
from bench.loadgen import run_load

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


def run(seconds: float = 8.0) -> list[dict]:
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

        with server("bench.floor_app:app", env) as (port, _):
            floor_send = run_load("127.0.0.1", port, "/enqueue", method="POST", body=b"{}",
                                  expect=202, seconds=seconds)
            floor_json = run_load("127.0.0.1", port, "/json", method="POST", body=b"{}",
                                  seconds=seconds)
        with server("api.app:create_app", env) as (port, pid):
            send = run_load("127.0.0.1", port, "/api/v1/notifications/send", method="POST",
                            body=request, headers=headers, expect=202, seconds=seconds)
            preview = run_load("127.0.0.1", port, "/api/v1/notifications/preview",
                               method="POST", body=request, headers=headers, seconds=seconds)
            rss = max((peak_rss_mb(child) for child in children_of(pid)), default=0.0)

    db_name = "postgresql" if database_url.startswith("postgres") else "sqlite"
    figures.append(figure("send", send.rate, f"req/s ({db_name})", floor_send.rate))
    figures.append(figure("send_p50", send.p50, "ms", floor_send.p50, higher_is_better=False))
    figures.append(figure("send_p99", send.percentile(99), "ms", floor_send.percentile(99),
                          higher_is_better=False))
    figures.append(figure("preview", preview.rate, "req/s", floor_json.rate))
    figures.append(figure("rss_api", rss, "MiB", None))
    errors = send.errors + preview.errors
    if errors:
        figures.append(figure("api_errors", errors, "responses not 2xx", None))
    return figures


if __name__ == "__main__":
    for row in run():
        print(row)
