"""Real parts for every test: a Redis server on a free port and the database under test.

HERALD_TEST_DATABASE_URL picks PostgreSQL; otherwise a SQLite file in a temp folder.
"""

from __future__ import annotations

import os
import secrets as py_secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import trustme
from redis import Redis

from config.settings import Settings
from engine import runtime
from engine.database.migrations import ALL_MODELS as ENGINE_MODELS
from engine.database.migrations import upgrade
from engine.database.models.callbacks import CALLBACK_MODELS
from engine.database.models.inbound import INBOUND_MODELS
from engine.database.models.partials import PARTIAL_MODELS
from engine.database.models.people import PEOPLE_MODELS
from engine.database.models.recipients import RECIPIENT_MODELS
from engine.database.models.reports import REPORT_MODELS
from engine.database.models.retention import RETENTION_MODELS
from engine.queue.embedded_redis import EmbeddedRedis, start_redis
from tests.support.dns_server import LoopbackDns
from tests.support.https_receiver import HttpsReceiver

# Every table the migrations make, in dependency order (emptied in reverse).
ALL_MODELS = (*ENGINE_MODELS, *PEOPLE_MODELS, *REPORT_MODELS, *CALLBACK_MODELS,
              *RETENTION_MODELS, *PARTIAL_MODELS, *RECIPIENT_MODELS, *INBOUND_MODELS)

# Made afresh for each run: a key written in the repository is published, and production
# refuses every published key (config/settings.py, issue 37).
TEST_SECRET_KEY = "test-" + py_secrets.token_urlsafe(32)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[EmbeddedRedis]:
    server = start_redis()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The database of this test process: under pytest-xdist (``make test`` runs one
    process per core, docs/testing.md) each process has its own, a SQLite file in its own
    temp folder or, on PostgreSQL, a database named after the one given and the process
    (``test`` becomes ``test_gw0``, ``test_gw1``...), made on first use."""
    url = os.environ.get("HERALD_TEST_DATABASE_URL")
    if url:
        worker = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1...: set by pytest-xdist
        return own_postgres_database(url, worker) if worker else url
    return f"sqlite:///{tmp_path_factory.mktemp('db')}/herald-test.sqlite3"


def own_postgres_database(url: str, suffix: str) -> str:
    """``url`` with its database renamed ``<name>_<suffix>``, created if it is missing
    (on the server ``url`` names, by a connection to its own database)."""
    import psycopg2
    from psycopg2 import sql

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/')}_{suffix}"
    admin = psycopg2.connect(url)
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if cursor.fetchone() is None:
                cursor.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    finally:
        admin.close()
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture(scope="session")
def base_settings(redis_server: EmbeddedRedis, database_url: str) -> Settings:
    return Settings(
        env="test",
        database_url=database_url,
        redis_url=redis_server.url,
        secret_key=TEST_SECRET_KEY,
        public_url="http://herald.test",
        email_provider="inbox://",
        sms_provider="inbox://",
        webhook_allow_private=True,
    )


@pytest.fixture(scope="session")
def _schema(base_settings: Settings) -> Iterator[None]:
    db = runtime.configure(base_settings)
    db.connect(reuse_if_open=True)
    # A leftover schema from an earlier run would hide migration bugs: start from nothing.
    db.drop_tables(list(ALL_MODELS), safe=True, cascade=db.__class__.__name__ != "SqliteDatabase")
    upgrade(db)
    db.close()
    yield


@pytest.fixture
def settings(base_settings: Settings, _schema: None,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """Settings bound into the engine, with an empty database and an empty Redis, and
    the process's view of its outages fresh: a worker an earlier test ran in this process
    stopped its waits for Redis and the database (``stop_waiting``), and whichever tests
    ran before this one in this process (pytest-xdist deals them out) must not matter."""
    from engine.catalog import keycache, snapshots, suppression_cache
    from engine.database import generations
    from engine.queue import redis_outages
    from engine.worker import database_wait

    monkeypatch.setattr(redis_outages, "_state", redis_outages._Outages())
    monkeypatch.setattr(database_wait, "_since", None)

    db = runtime.configure(base_settings)
    db.connect(reuse_if_open=True)
    _empty_tables(db)
    snapshots.clear()
    keycache.clear()
    suppression_cache.clear()
    Redis.from_url(base_settings.redis_url).flushall()
    generations.forget()
    yield base_settings
    if not db.is_closed():
        db.close()


@pytest.fixture(scope="session")
def app_for() -> Callable[[Settings], Any]:
    """``app_for(settings)``: the app factory's application for these settings, made once
    per session and then bound again as the factory binds it (runtime.configure). An app
    keeps nothing of a test: its routes, configuration and extensions are fixed when it is
    made, and what requests change is in the database and Redis, emptied for each test.
    Making one (about 150 routes, each compiled by werkzeug) took 0.15 s of CPU a test."""
    from cli.app import create_app

    made: dict[Settings, Any] = {}

    def app(settings: Settings) -> Any:
        if settings not in made:
            made[settings] = create_app(settings)
        else:
            runtime.configure(settings)
        return made[settings]

    return app


@pytest.fixture
def db(settings: Settings):
    from engine.database.db import database

    return database.obj


def _empty_tables(db) -> None:
    from engine.database.models import SchemaVersion

    tables = [m for m in reversed(ALL_MODELS) if m is not SchemaVersion]
    if db.__class__.__name__ == "SqliteDatabase":
        with db.atomic():
            for model in tables:
                model.delete().execute()
    else:
        names = ", ".join(f'"{m._meta.table_name}"' for m in tables)
        db.execute_sql(f"TRUNCATE {names} RESTART IDENTITY CASCADE")


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="session")
def example_package(tmp_path_factory: pytest.TempPathFactory):
    """``install(name)``: the package examples/<name> pip-installed (no dependencies) into a
    folder of its own, as an operator installs a third-party plugin; returns the folder."""
    installed: dict[str, Path] = {}

    def install(name: str) -> Path:
        if name not in installed:
            target = tmp_path_factory.mktemp(f"site-{name}")
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                 "--target", str(target), str(EXAMPLES / name)],
                capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr
            installed[name] = target
        return installed[name]

    return install


@pytest.fixture
def plugins_from(monkeypatch: pytest.MonkeyPatch):
    """``load(folder)``: plugins installed in ``folder`` join this process's registry for the
    test (the registry and the providers it opened are rebuilt before and after)."""
    from engine.delivery import providers
    from engine.plugins import manager

    def load(folder: Path) -> None:
        monkeypatch.syspath_prepend(str(folder))
        manager.default_registry.cache_clear()
        providers.close_all()

    yield load
    manager.default_registry.cache_clear()
    providers.close_all()


# The webhook receiver side: a test CA, an HTTPS receiver, a DNS server on loopback.
PUBLIC = "93.184.215.14"  # resolution only: nothing ever connects to it


@pytest.fixture(scope="session")
def ca():
    return trustme.CA()


@pytest.fixture(scope="session")
def ca_file(ca, tmp_path_factory):
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture
def receiver(ca):
    server = HttpsReceiver(ca)
    yield server
    server.close()


@pytest.fixture
def zone() -> Iterator[object]:
    """A DNS server on loopback answering from a zone the test edits (dnslib)."""
    from tests.support.zone_server import ZoneServer

    server = ZoneServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def dns_server():
    server = LoopbackDns({
        "hook.test": {"A": ["127.0.0.1"]},
        "down.test": {"fail": True},
        "slow.test": {"silent": True},
        "other.test": {"A": ["127.0.0.1"]},
        "public.test": {"A": [PUBLIC]},
        "v6only.test": {"AAAA": ["2606:2800:220:1:248:1893:25c8:1946"]},
        "mixed.test": {"A": [PUBLIC, "10.0.0.5"]},
        "mixed6.test": {"A": [PUBLIC], "AAAA": ["fd00::1"]},
        "alias.test": {"CNAME": "internal.test."},
        "internal.test": {"A": ["192.168.1.10"]},
        "metadata.test": {"A": ["169.254.169.254"]},
        "cgnat.test": {"A": ["100.64.0.1"]},
        "nat64.test": {"AAAA": ["64:ff9b::a00:1"]},
        "mapped.test": {"AAAA": ["::ffff:127.0.0.1"]},
        "loop.test": {"A": ["127.0.0.1"]},
    })
    yield server
    server.close()


@pytest.fixture
def sender_settings(settings: Settings, zone, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings whose every DNS lookup asks ``zone``, with the zones records point into."""
    from engine.senders import identity

    changed = settings.with_changes(dns_nameservers=(zone.nameserver,),
                                    dkim_zone="dkim.herald.test",
                                    return_path_domain="rp.herald.test")
    monkeypatch.setattr(runtime, "_settings", changed)
    identity.clear()
    return changed


@pytest.fixture
def windows_held(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clocks of the windowed counters (the API's per-minute limits, the tracking
    guard, the web throttle) held at one instant, a second into a minute and into a
    15-minute window: a test that counts requests up to a limit cannot see its window turn
    over between the first and the last (the count would start afresh and no 429 come)."""
    import time
    from types import SimpleNamespace

    from engine.delivery import tracking_guard
    from engine.sending import limits
    from web import throttle

    held = time.time() // throttle.WINDOW * throttle.WINDOW + 1
    for module in (limits, tracking_guard, throttle):
        monkeypatch.setattr(module, "time", SimpleNamespace(time=lambda: held))
