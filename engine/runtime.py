"""Process-wide wiring: settings, the database binding, the at-rest key and Redis."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from peewee import Database
from redis import Redis

from config.settings import Settings
from engine.database import secrets
from engine.database.db import bind_database, database
from engine.queue.redis_clients import connect

_settings: Settings | None = None
_redis: Redis | None = None
_pid: int | None = None
_patient = False  # the worker's client waits out a lost Redis (engine/queue/redis_outages.py)
# Things built from the Redis client (registered scripts, the enqueuer), dropped with it.
_bound: dict[str, Any] = {}
T = TypeVar("T")


def configure(settings: Settings, patient_redis: bool = False) -> Database:
    """Bind everything a process needs from its settings; call once at start-up.

    ``patient_redis``: Redis commands wait for a lost Redis to come back instead of raising
    (the worker); the API's client keeps failing fast.
    """
    global _settings, _redis, _pid, _patient
    _settings = settings
    _patient = patient_redis
    _redis = None
    _bound.clear()
    _pid = os.getpid()
    secrets.configure(settings.secret_key)
    replaced = database.obj
    db = bind_database(settings.database_url)
    _release(replaced)
    return db


def _release(replaced: Database | None) -> None:
    """Close this thread's connection to a database the proxy no longer names: nothing can
    reach it any more, and an open SQLite connection left behind keeps the file's locks
    bookkept as held by this process (a second configure, a test's reconfigure)."""
    if replaced is not None and not replaced.is_closed() and not replaced.in_transaction():
        replaced.close()


def ensure_own_connections() -> None:
    """In a forked child (RQ's fork-per-job worker), never reuse the parent's sockets.

    A child that wrote on its parent's PostgreSQL or Redis connection would interleave
    bytes with the parent and hang or corrupt both; it binds fresh ones instead.
    """
    global _redis, _pid
    if _settings is not None and _pid != os.getpid():
        _pid = os.getpid()
        _redis = None
        _bound.clear()
        bind_database(_settings.database_url)


def settings() -> Settings:
    if _settings is None:
        raise RuntimeError("engine.runtime.configure() has not been called")
    return _settings


def redis() -> Redis:
    """The shared Redis client (a connection pool underneath; under Sentinel, the pool
    follows the primary the sentinels name)."""
    global _redis
    if _redis is None:
        url = settings().redis_url
        if not url:
            raise RuntimeError("HERALD_REDIS_URL is not set")
        # The API's client fails fast: a Redis that does not answer is a 503 within seconds
        # (api/app.py), never a request hanging until gunicorn kills its worker.
        options: dict[str, Any] = {"socket_connect_timeout": 2.0, "socket_timeout": 5.0}
        if _patient:
            from engine.queue.redis_outages import client_options

            options = client_options()
        _redis = connect(url, health_check_interval=30, **options)
    return _redis


def redis_if_made() -> Redis | None:
    """The shared client if this process has made it, else None (never makes one: a process
    that was not configured, such as a bare RQ worker, has none)."""
    return _redis


def redis_bound(name: str, build: Callable[[Redis], T]) -> T:
    """``build(redis())`` made once per client: made again after a fork or a reconfigure,
    never used with a client it was not made for."""
    value = _bound.get(name)
    if value is None:
        value = _bound[name] = build(redis())
    return value
