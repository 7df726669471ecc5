"""`herald dev`: SQLite, an embedded Redis, the API and a worker, and a demo key to try."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cli.common import CommandError
from config.settings import Settings

STATE_DIR = Path("var")
DEV_DKIM_ZONE = "dkim.herald-dev.test"
DEV_RETURN_PATH_DOMAIN = "bounces.herald-dev.test"


def _demo_key(settings: Settings) -> str:
    """Reuse the demo key across restarts (kept in var/, development only) or make one."""
    from engine.catalog.keys import create_key
    from engine.database import secrets
    from engine.database.models import ApiKey, Workspace
    from engine.provisioning.demo import DEMO_WORKSPACE_ID

    path = STATE_DIR / "dev-api-key.json"
    if path.exists():
        saved = json.loads(path.read_text())
        key = ApiKey.get_or_none(ApiKey.key_hash == secrets.hash_api_key(saved["key"]))
        if key is not None and key.status_at() == "active":
            return saved["key"]
    workspace = Workspace.get_by_id(DEMO_WORKSPACE_ID)
    key, value = create_key(workspace, f"dev-{int(time.time())}")
    path.write_text(json.dumps({"id": str(key.id), "key": value}))
    path.chmod(0o600)
    return value


DEMO_OWNER_EMAIL = "owner@example.com"


def _demo_owner() -> tuple[str, str]:
    """The demo workspace's Owner and a password to sign in with (kept in var/ like the key,
    development only): reused while it still works, else set anew."""
    import secrets

    from engine.database.models import Workspace
    from engine.people import roles, users
    from engine.provisioning.demo import DEMO_WORKSPACE_ID

    path = STATE_DIR / "dev-owner.json"
    saved = json.loads(path.read_text()) if path.exists() else {}
    user = users.find(DEMO_OWNER_EMAIL)
    password = saved.get("password", "")
    if user is None:
        password = secrets.token_urlsafe(12)
        user = users.create(DEMO_OWNER_EMAIL, "Demo Owner", password)
    elif users.authenticate(DEMO_OWNER_EMAIL, password) is None:
        password = secrets.token_urlsafe(12)
        users.set_password(user, password)
    roles.add(Workspace.get_by_id(DEMO_WORKSPACE_ID), user, "owner")
    path.write_text(json.dumps({"email": DEMO_OWNER_EMAIL, "password": password}))
    path.chmod(0o600)
    return DEMO_OWNER_EMAIL, password


def _prepare(settings: Settings, callback_url: str | None = None
             ) -> tuple[str, tuple[str, str], str]:
    """The schema, the demo tenant, its key, its Owner and its webhook signing secret; with
    ``callback_url``, the demo workspace's delivery callbacks go there unless it has a
    callback URL already (docs/callbacks.md, "In development")."""
    from cli.common import connect
    from engine.database.migrations import upgrade
    from engine.database.models import Workspace
    from engine.provisioning import apply_document
    from engine.provisioning.demo import DEMO_WORKSPACE_ID, demo_document

    db = connect(settings)
    upgrade(db)
    apply_document(demo_document())
    key = _demo_key(settings)
    owner = _demo_owner()
    demo = Workspace.get_by_id(DEMO_WORKSPACE_ID)
    if callback_url and not demo.callback_url:
        Workspace.update(callback_url=callback_url).where(
            Workspace.id == DEMO_WORKSPACE_ID).execute()
    secret = demo.signing_secret
    db.close()
    return key, owner, secret


def _first_steps(base: str, key: str, secret: str, webhooks_allowed: bool) -> str:
    """What `herald dev` prints: where things are, the demo key and secret, two sends."""
    from engine.provisioning.demo import (
        DEMO_EMAIL_TEMPLATE_ID,
        DEMO_WEBHOOK_TEMPLATE_ID,
        DEMO_WORKSPACE_ID,
    )

    def curl(body: dict) -> str:
        return (f"  curl -sS -X POST {base}/api/v1/notifications/send \\\n"
                f"    -H 'Content-Type: application/json' -H 'X-Api-Key: {key}' \\\n"
                f"    -d '{json.dumps(body)}'")

    email = {"tenantId": DEMO_WORKSPACE_ID, "templateId": DEMO_EMAIL_TEMPLATE_ID,
             "tags": [{"key": "name", "value": "Ada"}]}
    webhook = {"tenantId": DEMO_WORKSPACE_ID, "templateId": DEMO_WEBHOOK_TEMPLATE_ID,
               "tags": [{"key": "orderId", "value": "A-1001"}],
               "webhookOptions": {"urlOverride": f"{base}/dev/inbox/webhooks/demo"}}
    note = "" if webhooks_allowed else (
        "\n  (HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS is false: this send will be refused)")
    return f"""
Demo API key (shown for development only):
  X-Api-Key: {key}
Demo webhook signing secret (verify X-Service-Signature with it, docs/webhooks.md):
  Signing secret: {secret}

Send the demo email:
{curl(email)}

Send the demo webhook to the dev inbox's webhook catcher:{note}
{curl(webhook)}

Both arrive at {base}/dev/inbox (the webhook with its headers, body and signature check).
Their delivery callbacks arrive there too, as webhooks named "callbacks" (docs/callbacks.md).
"""


def dev_environment(environ: dict[str, str], port: int) -> dict[str, str]:
    """The children's environment: the operator's values win, development defaults fill in."""
    env = dict(environ)
    env.setdefault("HERALD_PUBLIC_URL", f"http://127.0.0.1:{port}")
    # The dev inbox's webhook catcher is on loopback over http://: let webhooks reach it.
    env.setdefault("HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS", "true")
    # Demo zones (.test is reserved, RFC 6761) so the Senders page can add a domain at once:
    # its records are shown and checked as in production; nothing resolves them.
    env.setdefault("HERALD_DKIM_ZONE", DEV_DKIM_ZONE)
    env.setdefault("HERALD_RETURN_PATH_DOMAIN", DEV_RETURN_PATH_DOMAIN)
    return env


def run_dev(settings: Settings, port: int | None = None) -> int:
    """Run until Ctrl-C (exit 0) or until a child exits (its status, else 1); every process
    started here is stopped on the way out."""
    from engine.queue.embedded_redis import start_redis

    if settings.production:
        print("herald dev refuses HERALD_ENV=production", file=sys.stderr)
        return 2
    STATE_DIR.mkdir(exist_ok=True)
    port = port or settings.port
    redis = None
    env = dict(os.environ)
    if not settings.redis_url:
        try:
            redis = start_redis()
        except RuntimeError as err:  # no redis-server to embed: one line, not a traceback
            raise CommandError(f"{err} (pip install 'herald-notification-service[dev]', or set "
                               "HERALD_REDIS_URL)") from None
        env["HERALD_REDIS_URL"] = redis.url
    env = dev_environment(env, port)
    webhooks_allowed = env["HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS"].strip().lower() in (
        "1", "true", "yes", "on")
    env["HERALD_ENV"] = settings.env
    settings = settings.with_changes(redis_url=env["HERALD_REDIS_URL"])
    children: list[tuple[str, subprocess.Popen]] = []
    stopping = False
    status = 0

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        # The dev inbox's webhook catcher takes the demo's delivery callbacks too.
        catcher = f"http://127.0.0.1:{port}/dev/inbox/webhooks/callbacks"
        key, (owner_email, owner_password), secret = _prepare(
            settings, catcher if webhooks_allowed else None)
        python = sys.executable
        children.append(("the API server", subprocess.Popen(
            [python, "-m", "cli", "serve", "--host", "127.0.0.1", "--port", str(port),
             "--workers", "2"], env=env)))
        children.append(("the worker", subprocess.Popen([python, "-m", "cli", "worker"],
                                                        env=env)))
        base = f"http://127.0.0.1:{port}"
        print(f"""
Herald is running (development).
  Web app:    {base}/   sign in as {owner_email} with the password {owner_password}
  API:        {base}/api/v1/   docs: {base}/docs   OpenAPI: {base}/openapi/v1.json
  Dev inbox:  {base}/dev/inbox   (webhooks: {base}/dev/inbox/webhooks/NAME)
  Redis:      {settings.redis_url}{' (embedded)' if redis else ''}
  Database:   {settings.database_url}
{_first_steps(base, key, secret, webhooks_allowed)}
Press Ctrl-C to stop.
""", flush=True)
        while not stopping:
            for name, child in children:
                if child.poll() is not None and not stopping:
                    # Nothing works without either: stop, and say so in the exit status.
                    status = child.returncode if child.returncode > 0 else 1
                    print(f"herald dev: {name} exited ({child.returncode}); stopping "
                          f"everything (exit {status})", file=sys.stderr)
                    stopping = True
            time.sleep(0.2)
    finally:
        for _, child in children:
            if child.poll() is None:
                child.terminate()
        for _, child in children:
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        if redis is not None:
            redis.stop()
    return status
