"""What one committed notification row costs PostgreSQL, by the shape of its table.

``python -m bench.profile table`` (PostgreSQL only) makes one real send, then copies
`notification` four ways in the bench's database: as it is (its payload compressed with
lz4 where the server has it, migration step 18), with pglz instead, without its foreign
keys, and with its primary key as its only index. Eight client processes fill each copy
for a few seconds with that send's row (a new id each time) through a prepared statement
in autocommit, as `insert_rows` sends it, and PostgreSQL's CPU over the run is divided
by the rows. The copies take turns, round after round, because this machine's speed
drifts (docs/history/performance-notebook.md, "The eighth sitting"). One backend then
writes 20,000 copies of the row into each copy in one statement: the row's own work,
without clients or shared locks.
"""

from __future__ import annotations

import multiprocessing
import time
import uuid
from typing import Any

import requests

from bench.api import bench_tenant
from bench.common import server

CLIENTS = 8
COPIES = {
    "as notification is": "bench_row_as_is",
    "its payload compressed with pglz, as before step 18": "bench_row_pglz",
    "no foreign keys": "bench_row_no_keys",
    "no foreign keys, the primary key its only index": "bench_row_pk_only",
}


def _postgres_cpu() -> float:
    """CPU seconds so far of the machine's PostgreSQL processes (backends still open), as
    ``bench.profile cpu`` counts them."""
    from bench.machine_cpu import cpu_by_part

    return cpu_by_part(set())["postgresql"]


def _make_copies(cur: Any) -> None:
    """The four copies of `notification`, its foreign keys copied where the copy keeps
    them."""
    cur.execute("SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = 'notification'::regclass AND contype = 'f'")
    keys = [definition for (definition,) in cur.fetchall()]
    for table in COPIES.values():
        cur.execute(f"DROP TABLE IF EXISTS {table}")
    for table in ("bench_row_as_is", "bench_row_pglz", "bench_row_no_keys"):
        cur.execute(f"CREATE TABLE {table} (LIKE notification INCLUDING ALL)")
    for table in ("bench_row_as_is", "bench_row_pglz"):
        for definition in keys:
            cur.execute(f"ALTER TABLE {table} ADD {definition}")
    cur.execute("ALTER TABLE bench_row_pglz ALTER COLUMN payload SET COMPRESSION pglz")
    cur.execute("CREATE TABLE bench_row_pk_only (LIKE notification INCLUDING DEFAULTS "
                "INCLUDING COMPRESSION)")
    cur.execute("ALTER TABLE bench_row_pk_only ADD PRIMARY KEY (id)")


def _client(url: str, table: str, row: dict[str, Any], seconds: float,
            start: Any, counts: Any, measured: Any) -> None:
    """Insert ``row`` with a new id into ``table`` until ``seconds`` are up; the connection
    stays open until the parent has read PostgreSQL's CPU (a closed backend's CPU is gone
    from the process table)."""
    import psycopg2

    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    columns = list(row)
    cur.execute(f"PREPARE bench_row AS INSERT INTO {table} ({', '.join(columns)}) VALUES "
                f"({', '.join(f'${n}' for n in range(1, len(columns) + 1))})")
    execute = f"EXECUTE bench_row ({', '.join(['%s'] * len(columns))})"
    values = [row[c] for c in columns]
    start.wait(timeout=120)
    inserted, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        values[0] = str(uuid.uuid4())
        cur.execute(execute, values)
        inserted += 1
    counts.put(inserted)
    measured.wait()
    conn.close()


def _fill(url: str, table: str, row: dict[str, Any], seconds: float) -> tuple[float, float]:
    """(PostgreSQL µs of CPU a row, rows/s) for ``CLIENTS`` processes filling ``table``."""
    context = multiprocessing.get_context("spawn")
    start, measured = context.Barrier(CLIENTS + 1), context.Event()
    counts = context.Queue()
    clients = [context.Process(target=_client, args=(url, table, row, seconds, start, counts,
                                                     measured), daemon=True)
               for _ in range(CLIENTS)]
    for client in clients:
        client.start()
    start.wait(timeout=120)  # every client connected and prepared (a broken one: raises)
    before = _postgres_cpu()
    rows = sum(counts.get(timeout=seconds + 120) for _ in clients)
    after = _postgres_cpu()
    measured.set()
    for client in clients:
        client.join()
    return 1e6 * (after - before) / max(rows, 1), rows / seconds


def _serial(cur: Any, table: str, columns: list[str], rows: int = 20_000) -> float:
    """µs a row for one backend writing ``rows`` copies of the source row in one statement:
    the row's own work without clients, round trips or a lock shared with others."""
    # The payload made afresh (``|| ''``): a value already compressed in the source row
    # would be copied as it is, never compressed again.
    others = ", ".join("payload || ''" if c == "payload" else c for c in columns[1:])
    started = time.perf_counter()
    cur.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT gen_random_uuid(), "
                f"{others} FROM bench_row_source, generate_series(1, {rows})")
    return 1e6 * (time.perf_counter() - started) / rows


def run(rounds: int = 4, seconds: float = 6.0) -> None:
    """Print PostgreSQL's CPU a row for each copy, as a range over ``rounds`` rounds."""
    import psycopg2

    with bench_tenant() as (env, key, body):
        url = env["HERALD_DATABASE_URL"]
        if not url.startswith("postgresql"):
            raise SystemExit("bench.profile table measures PostgreSQL; none answers here")
        with server("cli.app:create_app", env) as (port, _):
            answer = requests.post(f"http://127.0.0.1:{port}/api/v1/notifications/send",
                                   data=body, headers={"X-Api-Key": key,
                                                       "Content-Type": "application/json"},
                                   timeout=30)
            answer.raise_for_status()
        conn = psycopg2.connect(url)
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT * FROM notification LIMIT 1")
                names = [column.name for column in cur.description]
                row = dict(zip(names, cur.fetchone(), strict=True))
                _make_copies(cur)
            results: dict[str, list[tuple[float, float]]] = {label: [] for label in COPIES}
            for number in range(rounds):
                for label, table in COPIES.items():
                    results[label].append(_fill(url, table, row, seconds))
                    cpu, rate = results[label][-1]
                    print(f"round {number + 1}: {label}: {cpu:.0f} µs a row, {rate:,.0f} rows/s",
                          flush=True)
            print(f"\nPostgreSQL µs of CPU a row ({CLIENTS} clients, {rounds} rounds of "
                  f"{seconds:.0f} s; {len(row['payload'])} characters of payload)")
            for label, pairs in results.items():
                cpus, rates = sorted(c for c, _ in pairs), sorted(r for _, r in pairs)
                print(f"{label:55} {cpus[0]:4.0f}-{cpus[-1]:<4.0f} "
                      f"{rates[0]:7,.0f}-{rates[-1]:,.0f} rows/s")
            with conn.cursor() as cur:
                cur.execute("CREATE TEMP TABLE bench_row_source AS "
                            "SELECT * FROM notification LIMIT 1")
                serial: dict[str, list[float]] = {label: [] for label in COPIES}
                for _ in range(rounds):
                    for label, table in COPIES.items():
                        serial[label].append(_serial(cur, table, names))
            print("\nOne backend, one INSERT ... SELECT of 20,000 rows: µs a row")
            for label, times in serial.items():
                times.sort()
                print(f"{label:55} {times[0]:4.1f}-{times[-1]:.1f}")
        finally:
            with conn.cursor() as cur:
                for table in COPIES.values():
                    cur.execute(f"DROP TABLE IF EXISTS {table}")
            conn.close()
