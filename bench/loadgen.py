"""A small closed-loop HTTP load generator: N keep-alive connections, fixed duration.

Used for both the floor and the subject in one run, so its own cost cancels in the ratio.
"""

from __future__ import annotations

import atexit
import http.client
import multiprocessing as mp
import os
import statistics
import threading
import time
from dataclasses import dataclass


@dataclass
class LoadResult:
    requests: int
    errors: int
    seconds: float
    latencies_ms: list[float]

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
        return ordered[index]

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else 0.0


def _worker(host: str, port: int, method: str, path: str, body: bytes, headers: dict,
            expect: int, window: tuple[float, float, float], out: list, errors: list,
            unique_header: str | None = None) -> None:
    """One keep-alive connection from the warm-up's start to the run's end; only the
    requests started inside the measured part of ``window`` (warm, measured, stop) count."""
    _warm_at, measure_at, stop_at = window
    conn = http.client.HTTPConnection(host, port, timeout=30)
    local: list[float] = []
    failed = 0
    # A value no other request of the run has (process, thread, count): a fresh key each time.
    prefix = f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}-"
    count = 0
    while (start_mono := time.monotonic()) < stop_at:
        counted = start_mono >= measure_at
        start = time.perf_counter()
        if unique_header is not None:
            count += 1
            headers = {**headers, unique_header: f"{prefix}{count}"}
        try:
            conn.request(method, path, body=body or None, headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status != expect:
                failed += counted
                continue
        except (OSError, http.client.HTTPException):
            failed += counted
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=30)
            continue
        if counted:
            local.append((time.perf_counter() - start) * 1000)
    conn.close()
    out.extend(local)
    errors.append(failed)


def _one_run(args: tuple) -> tuple[list[float], int]:
    """This process's share of one run: its threads, each one connection."""
    host, port, method, path, body, headers, expect, threads, window, unique = args
    while time.monotonic() < window[0]:
        time.sleep(0.001)
    latencies: list[float] = []
    errors: list[int] = []
    pool = [threading.Thread(target=_worker, args=(host, port, method, path, body, headers,
                                                   expect, window, latencies, errors, unique))
            for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return latencies, sum(errors)


def _serve(commands: mp.Queue, results: mp.Queue) -> None:
    """A load process kept between runs: one run per command until None."""
    results.put("ready")
    while (args := commands.get()) is not None:
        results.put(_one_run(args))


def _process(args: tuple, results: mp.Queue) -> None:
    results.put(_one_run(args))


class _Pool:
    """Load processes started once and kept: a run then starts in milliseconds instead of
    the second or two that starting interpreters takes on a busy machine (it was about
    half of the API bench's time)."""

    def __init__(self, processes: int) -> None:
        ctx = mp.get_context("spawn")
        self.results: mp.Queue = ctx.Queue()
        self.commands = [ctx.Queue() for _ in range(processes)]
        self.procs = [ctx.Process(target=_serve, args=(queue, self.results), daemon=True)
                      for queue in self.commands]
        for proc in self.procs:
            proc.start()
        for _ in self.procs:  # started and imported: a run's window can begin at once
            if self.results.get(timeout=120) != "ready":
                raise RuntimeError("a load process answered before it was ready")

    def close(self) -> None:
        for queue in self.commands:
            queue.put(None)
        for proc in self.procs:
            proc.join(timeout=10)


_pools: dict[int, _Pool] = {}


@atexit.register
def _close_pools() -> None:
    for pool in _pools.values():
        pool.close()
    _pools.clear()


def run_load(host: str, port: int, path: str, *, method: str = "GET", body: bytes = b"",
             headers: dict | None = None, expect: int = 200, connections: int = 16,
             processes: int = 2, seconds: float = 8.0, warmup: float = 2.0,
             unique_header: str | None = None, own_processes: bool = False) -> LoadResult:
    """Drive ``connections`` concurrent keep-alive clients for ``seconds`` after a warm-up
    on the same connections; ``unique_header`` gets a value of its own in every request.
    The load processes are kept between runs, unless ``own_processes`` (a caller that
    counts their CPU as its children's, bench/machine_cpu.py): then they start for this run
    and end with it."""
    headers = {"Content-Type": "application/json", **(headers or {})}
    per = max(1, connections // processes)
    lead = 1.0 if own_processes else 0.05  # time for every process to be ready
    warm_at = time.monotonic() + lead
    window = (warm_at, warm_at + warmup, warm_at + warmup + seconds)
    args = (host, port, method, path, body, headers, expect, per, window, unique_header)
    if own_processes:
        ctx = mp.get_context("spawn")
        results: mp.Queue = ctx.Queue()
        procs = [ctx.Process(target=_process, args=(args, results))
                 for _ in range(processes)]
        for p in procs:
            p.start()
    else:
        if processes not in _pools:
            _pools[processes] = _Pool(processes)
        pool = _pools[processes]
        results = pool.results
        warm_at = time.monotonic() + lead  # after the pool's start, if it just started
        window = (warm_at, warm_at + warmup, warm_at + warmup + seconds)
        args = (*args[:8], window, unique_header)
        for queue in pool.commands:
            queue.put(args)
    latencies: list[float] = []
    errors = 0
    for _ in range(processes):
        lat, err = results.get(timeout=warmup + seconds + 120)
        latencies.extend(lat)
        errors += err
    if own_processes:
        for p in procs:
            p.join(timeout=30)
    return LoadResult(len(latencies), errors, seconds, latencies)
