"""Seeds of a million rows made once and kept, keyed by what decides their content.

The reports and purge benches each need a database of about a million notifications with
their events: a few minutes of PostgreSQL's time, more than every other figure's setup
together. The first run seeds the bench's database as before, then copies it into a
template database named by a hash of the seed's code, the schema the migrations built
and the day; later runs with the same hash copy the template back (a file copy, seconds).
A change to the seed, the schema or the code the hash covers makes a new one; each kind
keeps its two newest. ``HERALD_BENCH_FRESH_SEED=1`` seeds afresh.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

KEEP = 2  # templates kept per kind: the trees of an A/B comparison, one each

_SCHEMA = """
SELECT coalesce(string_agg(line, E'\\n' ORDER BY line), '') FROM (
  SELECT table_name || '.' || column_name || ' ' || data_type || ' '
         || coalesce(column_default, '') || ' ' || is_nullable AS line
    FROM information_schema.columns WHERE table_schema = 'public'
  UNION ALL
  SELECT indexdef FROM pg_indexes WHERE schemaname = 'public'
  UNION ALL
  SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace) AS schema
"""


def package_source(name: str) -> str:
    """The text of every module of package ``name``: what the hash covers of code that
    shapes a seed (the report job's rollups, for one)."""
    package = importlib.import_module(name)
    return "".join(path.read_text() for folder in package.__path__
                   for path in sorted(Path(folder).glob("*.py")))


def _admin(url: str):
    import psycopg2

    parsed = urlparse(url)
    conn = psycopg2.connect(host=parsed.hostname, port=parsed.port or 5432,
                            user=parsed.username, password=parsed.password, dbname="postgres")
    conn.autocommit = True
    return conn


def _name(url: str) -> str:
    return urlparse(url).path.lstrip("/")


def _schema(url: str) -> str:
    import psycopg2

    with psycopg2.connect(url) as conn, conn.cursor() as cur:
        cur.execute(_SCHEMA)
        text = cur.fetchone()[0]
    conn.close()
    return text


def seeded(url: str, kind: str, parts: list[str],
           seed: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], bool]:
    """The bench's database ``url`` (upgraded, nobody connected) seeded: from the template
    of this hash when there is one, else by ``seed`` (which returns what the bench needs
    to know of its rows, as JSON, and closes its connections). Returns that and whether it
    came from a template."""
    digest = hashlib.sha256("\0".join(
        [kind, dt.date.today().isoformat(), _schema(url), *parts]).encode()).hexdigest()
    template, target = f"herald_seed_{kind}_{digest[:16]}", _name(url)
    admin = _admin(url)
    try:
        with admin.cursor() as cur:
            cur.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database "
                        "WHERE datname = %s", (template,))
            found = cur.fetchone()
            if found and found[0] and not os.environ.get("HERALD_BENCH_FRESH_SEED"):
                cur.execute(f'DROP DATABASE "{target}" WITH (FORCE)')
                cur.execute(f'CREATE DATABASE "{target}" TEMPLATE "{template}" '
                            "STRATEGY FILE_COPY")
                return json.loads(found[0]), True
        meta = seed()
        with admin.cursor() as cur:
            cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = %s AND pid <> pg_backend_pid()", (target,))
            cur.execute(f'DROP DATABASE IF EXISTS "{template}"')
            cur.execute(f'CREATE DATABASE "{template}" TEMPLATE "{target}" STRATEGY FILE_COPY')
            # Written last: a template without its comment is one a run did not finish.
            cur.execute(f'COMMENT ON DATABASE "{template}" IS %s', (json.dumps(meta),))
            cur.execute("SELECT datname FROM pg_database WHERE datname LIKE %s "
                        "ORDER BY oid DESC", (f"herald_seed_{kind}_%",))
            for (old,) in cur.fetchall()[KEEP:]:
                cur.execute(f'DROP DATABASE "{old}" WITH (FORCE)')
        return meta, False
    finally:
        admin.close()
