"""Shared plumbing for the benchmarks: processes, ports, the bench database, figures."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from engine.queue.embedded_redis import EmbeddedRedis, free_port, start_redis

ROOT = Path(__file__).resolve().parent.parent
BENCH_SECRET = "bench-secret-key-0123456789-abcdefghijklmnop"


def figure(name: str, value: float, unit: str, floor: float | None,
           higher_is_better: bool = True) -> dict:
    """One row of results.json; ratio > 1 means better than the floor."""
    if floor:
        ratio = value / floor if higher_is_better else floor / value if value else 0.0
    else:
        ratio = None
    return {"name": name, "value": round(value, 3), "unit": unit,
            "floor": None if floor is None else round(floor, 3),
            "ratio": None if ratio is None else round(ratio, 3)}


T = TypeVar("T")


def quick() -> bool:
    """`make bench-quick` (HERALD_BENCH_QUICK=1): fewer rounds, the edit-measure loop."""
    return os.environ.get("HERALD_BENCH_QUICK") == "1"


def rounds(full: int, fast: int) -> int:
    """How many rounds a figure takes: ``fast`` in a quick run."""
    return fast if quick() else full


def paired(floor_run: Callable[[], T], subject_run: Callable[[], T], number: int) -> tuple[T, T]:
    """(subject, floor) measured back to back, in alternating order from round to round, so
    that neither side is always the one that runs into a change of the machine's speed."""
    if number % 2:
        subject = subject_run()
        return subject, floor_run()
    floor = floor_run()
    return subject_run(), floor


def median_pair(pairs: list[tuple[T, T]], rate: Callable[[T], float]) -> tuple[T, T]:
    """The (subject, floor) pair with the median ratio: a burst of noise on this shared
    machine moves one pair, not the figure."""
    ordered = sorted(pairs, key=lambda pair: rate(pair[0]) / rate(pair[1]) if rate(pair[1])
                     else 0.0)
    return ordered[len(ordered) // 2]


def bench_database_url() -> str:
    """PostgreSQL when reachable (production's database), else a SQLite file."""
    url = os.environ.get("HERALD_BENCH_DATABASE_URL")
    if url:
        return url
    try:
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=5432, user="postgres", dbname="postgres",
                                connect_timeout=3)
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = 'herald_bench'")
            if cur.fetchone():
                cur.execute("DROP DATABASE herald_bench WITH (FORCE)")
            cur.execute("CREATE DATABASE herald_bench")
        conn.close()
        return "postgresql://postgres@127.0.0.1:5432/herald_bench"
    except Exception:
        path = ROOT / "var" / "bench.sqlite3"
        path.parent.mkdir(exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        return f"sqlite:///{path}"


@contextlib.contextmanager
def redis_server() -> Iterator[EmbeddedRedis]:
    server = start_redis()
    try:
        yield server
    finally:
        server.stop()


def bench_env(database_url: str, redis_url: str, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "HERALD_ENV": "test",
        "HERALD_DATABASE_URL": database_url,
        "HERALD_REDIS_URL": redis_url,
        "HERALD_SECRET_KEY": BENCH_SECRET,
        "HERALD_RATE_LIMIT_SEND_PER_KEY": "100000000",
        "HERALD_RATE_LIMIT_SEND_PER_IP": "100000000",
        "HERALD_RATE_LIMIT_VALIDATE_PER_IP": "100000000",
        "PYTHONPATH": str(ROOT),
    }
    env.update(extra)
    return env


def wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout}s")


@contextlib.contextmanager
def server(target: str, env: dict[str, str], workers: int = 2) -> Iterator[tuple[int, int]]:
    """Run bench.server for ``target``; yields (port, pid of the gunicorn master)."""
    port = free_port()
    # Its log goes to a file: a pipe nobody reads fills up after 64 KB of log lines (one
    # per accepted send) and then blocks the server mid-run.
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "bench.server", target, str(port),
                                 str(workers)], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=log)
        try:
            try:
                wait_port(port)
            except RuntimeError:
                log.seek(0)
                raise RuntimeError(f"{target} did not start: {log.read()[-2000:]!r}") from None
            yield port, proc.pid
        finally:
            _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def children_of(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the peak resident set of a live process, in MiB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def herald(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run([sys.executable, "-m", "cli", *args], env=env, cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"herald {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def stop_worker(worker: subprocess.Popen) -> None:
    """SIGTERM a `herald worker` the bench started (its own process group), then SIGKILL
    the group if it has not exited within a minute."""
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
