"""`/healthz`, `/readyz` and `/metrics`: what an orchestrator and Prometheus ask.

None needs an API key nor counts against a rate limit; /metrics needs its own bearer
token (engine/observability/metrics_registry.py). `/healthz` touches nothing (the
process answers); `/readyz` asks the database and Redis, each within a second, and names
the part that did not answer (docs/operations.md, "Health and readiness").
"""

from __future__ import annotations

from flask import Blueprint, Response, json, request

from api import problems
from engine import runtime
from engine.observability import metrics_registry, readiness
from engine.observability.outages import RETRY_AFTER_SECONDS, SETTINGS

blueprint = Blueprint("health", __name__)
# Paths the request hooks leave alone: no database connection is opened for them.
QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


@blueprint.get("/healthz")
def healthz() -> Response:
    return Response(json.dumps({"status": "ok"}), mimetype="application/json")


@blueprint.get("/readyz")
def readyz() -> Response:
    failed = readiness.problems()
    if not failed:
        return Response(json.dumps({"status": "ready", "checks": {
            "database": "ok", "redis": "ok"}}), mimetype="application/json")
    detail = "; ".join(f"{part} ({SETTINGS[part]}): {why}" for part, why in sorted(failed.items()))
    response = problems.problem(503, f"Not ready: {detail}", "service.unavailable",
                                headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    body = json.loads(response.get_data())
    body["checks"] = {part: failed.get(part, "ok") for part in ("database", "redis")}
    response.set_data(json.dumps(body))
    return response


@blueprint.get("/metrics")
def metrics() -> Response:
    refused = metrics_registry.refused(request.headers.get("Authorization"),
                                       runtime.settings().metrics_token)
    if refused == 404:
        return problems.problem(404)
    if refused == 401:
        return problems.problem(401, "/metrics needs Authorization: Bearer and the token "
                                "HERALD_METRICS_TOKEN holds.",
                                headers={"WWW-Authenticate": "Bearer"})
    body, content_type = metrics_registry.exposition()
    return Response(body, content_type=content_type)
