"""CPU of every part of the machine (the server, PostgreSQL, Redis, the load generator)
per request of a load run: what `bench.profile cpu` prints and `bench.profile table`
counts PostgreSQL's share with."""

from __future__ import annotations

import collections
import contextlib
import os
from pathlib import Path

from bench.loadgen import run_load


def cpu_by_part(server_pids: set[int]) -> dict[str, float]:
    """CPU seconds (user + system) so far of every process on the machine, by part, and
    the server's system CPU apart ("server sys", also inside "server"); ``server_pids``
    holds the server's processes, its workers included."""
    import psutil

    parts: collections.Counter[str] = collections.Counter()
    for proc in psutil.process_iter(["pid", "name", "cmdline", "cpu_times"]):
        times = proc.info["cpu_times"]
        if times is None:
            continue
        name = proc.info["name"] or ""
        cmdline = " ".join(proc.info["cmdline"] or [])
        if proc.info["pid"] in server_pids:
            part = "server"
            parts["server sys"] += times.system
        elif name.startswith("postgres") or "postgres:" in cmdline:
            part = "postgresql"
        elif name.startswith("redis-server"):
            part = "redis"
        elif "multiprocessing" in cmdline and proc.info["pid"] != os.getpid():
            part = "load generator"
        else:
            part = "other"
        parts[part] += times.user + times.system
        if part == "other" and os.environ.get("BENCH_PROFILE_OTHERS"):
            parts[f"other {proc.info['pid']} {cmdline[:80]}"] += times.user + times.system
    return parts


def server_switches(server_pids: set[int]) -> tuple[int, int]:
    """The server threads' voluntary and involuntary context switches so far (Linux: each
    thread's own counts, which its process's status leaves out). A voluntary switch is a
    thread that blocked: on a socket, on the GIL, on a lock."""
    voluntary, involuntary = 0, 0
    for pid in server_pids:
        for status in Path(f"/proc/{pid}/task").glob("*/status"):
            with contextlib.suppress(OSError):
                for line in status.read_text().splitlines():
                    if line.startswith("voluntary_ctxt_switches"):
                        voluntary += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        involuntary += int(line.split()[1])
    return voluntary, involuntary


def cpu_per_request(port: int, server_pids: set[int], path: str, body: bytes,
                    headers: dict, expect: int, seconds: float) -> dict[str, float]:
    """Microseconds of CPU per request spent by each part of the machine during a load run,
    with the server's share of system CPU and its context switches per request."""
    import psutil

    server_pids = set(server_pids)
    for pid in list(server_pids):
        server_pids.update(child.pid for child in psutil.Process(pid).children(recursive=True))
    switches = server_switches(server_pids)
    before = cpu_by_part(server_pids)
    children, machine = os.times(), psutil.cpu_times()
    result = run_load("127.0.0.1", port, path, method="POST", body=body, headers=headers,
                      expect=expect, seconds=seconds, warmup=0, own_processes=True)
    after = cpu_by_part(server_pids)
    children_after, machine_after = os.times(), psutil.cpu_times()
    switched = [b - a for a, b in zip(switches, server_switches(server_pids), strict=True)]
    after["load generator"] = (children_after.children_user + children_after.children_system
                               - children.children_user - children.children_system)
    before["load generator"] = 0.0
    after["idle"] = machine_after.idle - machine.idle
    # The load generator's processes end with the run: their whole CPU counts (run_load
    # starts them after ``before``), which includes their start; the same for both sides.
    count = max(1, result.requests)
    shares = {part: 1e6 * (after[part] - before.get(part, 0.0)) / count for part in after}
    shares["requests/s"] = result.rate
    shares["voluntary"], shares["involuntary"] = switched[0] / count, switched[1] / count
    return shares


def print_cpu(rows: dict[str, dict[str, float]]) -> None:
    """One line per run: µs of CPU per request by part; total leaves idle out."""
    parts = ["server", "postgresql", "redis", "load generator", "other", "idle"]
    if os.environ.get("BENCH_PROFILE_OTHERS"):
        for label, shares in rows.items():
            for part, value in sorted(shares.items(), key=lambda kv: -kv[1])[:12]:
                print(label, f"{value:8.0f}", part)
    print(f"{'µs of CPU per request':<22}" + "".join(f"{p:>15}" for p in parts)
          + f"{'total':>10}{'req/s':>10}{'server sys':>12}{'switches':>14}")
    for label, shares in rows.items():
        print(f"{label:<22}" + "".join(f"{shares.get(p, 0.0):>15.0f}" for p in parts)
              + f"{sum(shares.get(p, 0.0) for p in parts[:-1]):>10.0f}"
              + f"{shares['requests/s']:>10.0f}{shares['server sys']:>12.0f}"
              + f"{shares['voluntary']:>8.1f}/{shares['involuntary']:<5.1f}")
    print("server sys: the server's system CPU in its column; switches: the server threads' "
          "voluntary/involuntary context switches per request")
