"""A small closed-loop HTTP load generator: N keep-alive connections, fixed duration.

Used for both the floor and the subject in one run, so its own cost cancels in the ratio.
"""

from __future__ import annotations

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
            expect: int, stop_at: float, out: list, errors: list,
            unique_header: str | None = None) -> None:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    local: list[float] = []
    failed = 0
    # A value no other request of the run has (process, thread, count): a fresh key each time.
    prefix = f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}-"
    count = 0
    while time.monotonic() < stop_at:
        start = time.perf_counter()
        if unique_header is not None:
            count += 1
            headers = {**headers, unique_header: f"{prefix}{count}"}
        try:
            conn.request(method, path, body=body or None, headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status != expect:
                failed += 1
                continue
        except (OSError, http.client.HTTPException):
            failed += 1
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=30)
            continue
        local.append((time.perf_counter() - start) * 1000)
    conn.close()
    out.extend(local)
    errors.append(failed)


def _process(args: tuple, queue: mp.Queue) -> None:
    host, port, method, path, body, headers, expect, threads, start_at, seconds, unique = args
    while time.monotonic() < start_at:
        time.sleep(0.001)
    stop_at = start_at + seconds
    latencies: list[float] = []
    errors: list[int] = []
    pool = [threading.Thread(target=_worker, args=(host, port, method, path, body, headers,
                                                   expect, stop_at, latencies, errors, unique))
            for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    queue.put((latencies, sum(errors)))


def run_load(host: str, port: int, path: str, *, method: str = "GET", body: bytes = b"",
             headers: dict | None = None, expect: int = 200, connections: int = 16,
             processes: int = 2, seconds: float = 8.0, warmup: float = 2.0,
             unique_header: str | None = None) -> LoadResult:
    """Drive ``connections`` concurrent keep-alive clients for ``seconds`` after a warm-up;
    ``unique_header`` gets a value of its own in every request."""
    headers = {"Content-Type": "application/json", **(headers or {})}
    if warmup:
        run_load(host, port, path, method=method, body=body, headers=headers, expect=expect,
                 connections=connections, processes=processes, seconds=warmup, warmup=0,
                 unique_header=unique_header)
    ctx = mp.get_context("spawn")
    queue: mp.Queue = ctx.Queue()
    per = max(1, connections // processes)
    start_at = time.monotonic() + 1.0
    procs = [ctx.Process(target=_process, args=((host, port, method, path, body, headers,
                                                  expect, per, start_at, seconds,
                                                  unique_header), queue))
             for _ in range(processes)]
    for p in procs:
        p.start()
    latencies: list[float] = []
    errors = 0
    for _ in procs:
        lat, err = queue.get(timeout=seconds + 120)
        latencies.extend(lat)
        errors += err
    for p in procs:
        p.join(timeout=30)
    return LoadResult(len(latencies), errors, seconds, latencies)
