"""Floors for the API figures: bare Flask endpoints in the same server configuration."""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from typing import Any

from flask import Flask, Response, jsonify
from redis import Redis
from rq import Queue

app = Flask(__name__)
_queue = Queue("bench-floor", connection=Redis.from_url(os.environ["HERALD_REDIS_URL"]))
# A row about the size of a bench send's notification (its payload: 1,950 characters).
_PAYLOAD = "x" * 2048
_TABLE = "CREATE TABLE IF NOT EXISTS bench_floor (id VARCHAR(36) PRIMARY KEY, payload TEXT)"
_local = threading.local()
# The admission's shape: two rate-limit windows counted in one script, one round trip,
# called by its SHA as directly as redis-py allows (its Script object costs more per call).
_WINDOWS = _queue.connection.script_load("""
local ip = redis.call('INCR', KEYS[1])
if ip == 1 then redis.call('EXPIRE', KEYS[1], 60) end
local key = redis.call('INCR', KEYS[2])
if key == 1 then redis.call('EXPIRE', KEYS[2], 60) end
return 0
""")


def _connect() -> tuple[Any, str]:
    """This thread's connection to the bench's database, kept between requests as
    Herald keeps its own; returns it with the driver's placeholder."""
    url = os.environ["HERALD_DATABASE_URL"]
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None,
                               timeout=10)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(_TABLE)
        return conn, "?"
    import psycopg2
    import psycopg2.errors

    conn = psycopg2.connect(url)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(_TABLE)
    except (psycopg2.errors.UniqueViolation, psycopg2.errors.DuplicateTable):
        pass  # the other worker's thread made it at the same moment
    return conn, "%s"


def _enqueued(job_id: str):
    """One RQ enqueue of a no-op job, then the 202 a send answers."""
    _queue.enqueue("bench.floor_jobs.noop", job_id, job_id=job_id)
    return jsonify(accepted=True, correlationId=job_id), 202


@app.post("/enqueue")
def enqueue():
    """One RQ enqueue and a 202: the least a send endpoint can do."""
    return _enqueued(str(uuid.uuid4()))


@app.post("/enqueue-durable")
def enqueue_durable():
    """A committed INSERT of one row, then one RQ enqueue and a 202: what a send must do
    before its 202 (the row durable, its job queued), with nothing of Herald's own."""
    if getattr(_local, "conn", None) is None:
        _local.conn, _local.mark = _connect()
    job_id = str(uuid.uuid4())
    cursor = _local.conn.cursor()
    cursor.execute(f"INSERT INTO bench_floor (id, payload) VALUES ({_local.mark}, "
                   f"{_local.mark})", (job_id, _PAYLOAD))
    cursor.close()
    return _enqueued(job_id)


@app.post("/json")
def json_endpoint():
    return jsonify(ok=True)


def _answer() -> bytes:
    """The preview's own answer, as the bench read it from Herald into the file its
    variable names (bench/api.py's PREVIEW_ANSWER; this app imports nothing of the
    bench's): the floor writes the same bytes to the same client. Else a small document."""
    path = os.environ.get("HERALD_BENCH_PREVIEW_ANSWER")
    if not path:
        return b'{"ok": true}'
    with open(path, "rb") as answer:
        return answer.read()


_PREVIEW_ANSWER = _answer()


@app.post("/json-admitted")
def json_admitted():
    """One Redis round trip (a script counting the request in two rate-limit windows, as
    the preview's admission does), then the preview's answer, read at start: the least a
    preview with limits shared across hosts and a revoked key refused at once can do, and
    the bytes any preview of the bench's template must write."""
    _queue.connection.execute_command("EVALSHA", _WINDOWS, 2, "bench-floor:ip",
                                      "bench-floor:key")
    return Response(_PREVIEW_ANSWER, mimetype="application/json")
