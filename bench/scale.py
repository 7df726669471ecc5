"""`python -m bench scale`: Herald on several hosts, each a network namespace of this machine.

Topology (every address in 10.77.0.0/24 exists only inside namespaces this bench makes and
removes; no packet leaves the machine): a hub namespace holds a bridge; each host is a
namespace joined to it by a veth pair.

    data    10.77.0.10   Redis, PostgreSQL (a private cluster, fsync on), the SMTP sink
    api1/2  10.77.0.21-22  `herald serve --workers 2` each
    worker1-4 10.77.0.31-34  one `herald worker` process each
    load    10.77.0.40   the load generator (bench/loadgen.py), bounded in time

For 1, 2 and 4 worker hosts: a burst of sends through both API hosts for a fixed time,
then the backlog drained. Figures: emails/s into the SMTP sink (first arrival of the round
to the last), the send p99 at the API, and the CPU seconds each part used, which say where
the next bottleneck is. The ratio of each emails/s is to the 1-worker figure of the same
run (the floor). Falls back to nothing: without `ip netns` (root) the bench says so and
gives no figure.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from bench.api import TPL, WS, tenant
from bench.common import ROOT, bench_env, figure

SUBNET = "10.77.0"
PREFIX = "hsc"
DATA = f"{SUBNET}.10"
APIS = {"api1": f"{SUBNET}.21", "api2": f"{SUBNET}.22"}
WORKERS = {f"worker{n}": f"{SUBNET}.{30 + n}" for n in range(1, 5)}
LOAD = f"{SUBNET}.40"
HOSTS = {"data": DATA, **APIS, **WORKERS, "load": LOAD}
API_PORT, REDIS_PORT, PG_PORT, SMTP_PORT = 8000, 6379, 5432, 2525
SECONDS = 8.0  # of sends per round
CONNECTIONS = 8  # concurrent clients of the load generator, per API host
QUIET = 4.0  # no arrival for this long: the backlog is drained
SLOW_SMTP_PORT, SLOW_SECONDS = 2526, 0.2  # the round where a host waits rather than computes
FLOOR_MESSAGES, FLOOR_THREADS = 1600, 32
COUNTS = (1, 2, 4)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def _in(host: str, *cmd: str) -> list[str]:
    return ["ip", "netns", "exec", f"{PREFIX}-{host}", *cmd]


@contextlib.contextmanager
def topology() -> Iterator[None]:
    """The hub, its bridge and one namespace per host; all removed on the way out."""
    made: list[str] = []
    try:
        for name in ("hub", *HOSTS):
            _ip("netns", "add", f"{PREFIX}-{name}")
            made.append(f"{PREFIX}-{name}")
            _ip("-n", f"{PREFIX}-{name}", "link", "set", "lo", "up")
        _ip("-n", f"{PREFIX}-hub", "link", "add", "br0", "type", "bridge")
        _ip("-n", f"{PREFIX}-hub", "link", "set", "br0", "up")
        for n, (name, address) in enumerate(HOSTS.items()):
            inside, hub = f"{PREFIX}{n}a", f"{PREFIX}{n}b"
            _ip("link", "add", inside, "type", "veth", "peer", "name", hub)
            _ip("link", "set", inside, "netns", f"{PREFIX}-{name}")
            _ip("link", "set", hub, "netns", f"{PREFIX}-hub")
            _ip("-n", f"{PREFIX}-hub", "link", "set", hub, "master", "br0", "up")
            _ip("-n", f"{PREFIX}-{name}", "addr", "add", f"{address}/24", "dev", inside)
            _ip("-n", f"{PREFIX}-{name}", "link", "set", inside, "up")
        yield
    finally:
        for name in reversed(made):
            with contextlib.suppress(subprocess.CalledProcessError):
                _ip("netns", "del", name)


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and its living descendants."""
    ticks = os.sysconf("SC_CLK_TCK")
    total, todo, seen = 0.0, [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
    return total


class Sink:
    """The SMTP sink on the data host; counts arrivals as it prints them."""

    def __init__(self, env: dict[str, str], port: int = SMTP_PORT, delay: float = 0.0) -> None:
        self.proc = subprocess.Popen(_in("data", sys.executable, "-m", "bench.smtp_sink",
                                         str(port), DATA, str(delay)), env=env, cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the SMTP sink did not start")
        self.arrivals: list[float] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.arrivals.append(float(line.split()[1]))

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _start(host: str, env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(_in(host, sys.executable, "-m", "cli", *args), env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


def _herald(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(_in("load", sys.executable, "-m", "cli", *args), env=env, cwd=ROOT,
                          input=stdin, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"herald {' '.join(args)} failed: {proc.stderr[-2000:]}")
    return proc.stdout


def _wait_answers(address: str, timeout: float = 60) -> None:
    probe = ("import socket,sys\ntry:\n socket.create_connection((sys.argv[1], int(sys.argv[2]))"
             ", 1).close()\nexcept OSError:\n sys.exit(1)")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if subprocess.run(_in("load", sys.executable, "-c", probe, address, str(API_PORT)),
                          capture_output=True).returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError(f"the API on {address} did not start")


def _load(env: dict[str, str], key: str) -> dict:
    """The load generator on its host against both API hosts at once; its figures."""
    procs = [subprocess.Popen(_in("load", sys.executable, "-m", "bench.scale", "--load",
                                  address, key), env=env, cwd=ROOT, stdout=subprocess.PIPE,
                              text=True) for address in APIS.values()]
    results = [json.loads(proc.communicate(timeout=SECONDS + 180)[0]) for proc in procs]
    latencies = sorted(ms for result in results for ms in result["latencies"])
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else 0.0
    return {"accepted": sum(r["count"] for r in results), "errors": sum(r["errors"]
                                                                          for r in results),
            "rate": sum(r["count"] for r in results) / SECONDS, "p99": p99}


def _load_one(address: str, key: str) -> None:
    """Inside the load host: one API host's share of the round, as JSON on stdout."""
    from bench.loadgen import run_load

    request = json.dumps({"tenantId": WS, "templateId": TPL, "tags": [
        {"key": "name", "value": "Ada"}, {"key": "orderId", "value": "A-1001"}]}).encode()
    result = run_load(address, API_PORT, "/api/v1/notifications/send", method="POST",
                      body=request, headers={"X-Api-Key": key}, expect=202,
                      connections=CONNECTIONS, processes=1, seconds=SECONDS, warmup=0)
    print(json.dumps({"count": result.requests, "errors": result.errors,
                      "latencies": result.latencies_ms}))


def _round(workers: int, env: dict[str, str], key: str, sink: Sink,
           parts: dict[str, int]) -> dict:
    procs = [_start(name, env, "worker") for name in list(WORKERS)[:workers]]
    try:
        time.sleep(3.0)  # the workers' start-up (imports, plugins): not part of the rate
        cpu_before = {part: _tree_cpu(pid) for part, pid in parts.items()}
        worker_before = sum(_tree_cpu(p.pid) for p in procs)
        start, before = time.monotonic(), len(sink.arrivals)
        load = _load(env, key)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            last = sink.arrivals[-1] if sink.arrivals else start
            if len(sink.arrivals) > before and time.monotonic() - last > QUIET:
                break
            time.sleep(0.2)
        arrived = sink.arrivals[before:]
        cpu = {part: _tree_cpu(pid) - cpu_before[part] for part, pid in parts.items()}
        cpu["workers"] = sum(_tree_cpu(p.pid) for p in procs) - worker_before
    finally:
        for proc in procs:
            _stop(proc)
    span = (arrived[-1] - start) if arrived else 0.0
    return {"workers": workers, "emails": len(arrived), "seconds": span,
            "emails_per_s": len(arrived) / span if span else 0.0, **load,
            "cpu": {part: round(value, 1) for part, value in cpu.items()}}


def _slow_rounds(env: dict[str, str], key: str, parts: dict[str, int]) -> list[dict]:
    """1, 2 and 4 worker hosts at their default concurrency through a sink that takes
    200 ms a message, beside a bare smtplib client with 32 threads from the load host into
    the same sink. The tenant is one workspace: its share is raised to the whole of each
    process's slots (HERALD_WORKSPACE_CONCURRENCY), as a one-tenant deployment would."""
    slow_sink = Sink(env, SLOW_SMTP_PORT, SLOW_SECONDS)
    slow_env = {**env, "HERALD_EMAIL_PROVIDER": f"smtp://{DATA}:{SLOW_SMTP_PORT}?tls=none",
                "HERALD_WORKSPACE_CONCURRENCY": "32"}
    rounds = []
    try:
        out = subprocess.run(_in("load", sys.executable, "-m", "bench.smtp_floor",
                                 str(SLOW_SMTP_PORT), str(FLOOR_MESSAGES),
                                 str(FLOOR_THREADS), DATA),
                             env=env, cwd=ROOT, capture_output=True, text=True, check=True)
        floor = float(out.stdout.strip())
        for workers in COUNTS:
            row = {**_round(workers, slow_env, key, slow_sink, parts),
                   "sink_ms": SLOW_SECONDS * 1000, "floor": floor}
            rounds.append(row)
            print(json.dumps(row), flush=True)
    finally:
        slow_sink.stop()
    return rounds


def _psql(*statements: str) -> None:
    args = [arg for statement in statements for arg in ("-c", statement)]
    subprocess.run(_in("data", "runuser", "-u", "postgres", "--", "psql", "-h", DATA, "-p",
                       str(PG_PORT), *args), check=True, capture_output=True, timeout=60)


def run() -> list[dict]:
    if os.geteuid() != 0 or subprocess.run(["ip", "netns", "list"],
                                           capture_output=True).returncode != 0:
        print("bench.scale: needs root and `ip netns`; no figure", file=sys.stderr)
        return []
    from tests.support.private_postgres import start_postgres

    rounds: list[dict] = []
    with topology():
        redis = subprocess.Popen(_in("data", "redis-server", "--bind", DATA, "--port",
                                     str(REDIS_PORT), "--save", "", "--appendonly", "no",
                                     "--protected-mode", "no", "--maxmemory-policy",
                                     "noeviction"), stdout=subprocess.DEVNULL)
        cluster = start_postgres(listen=DATA, prefix=tuple(_in("data")), port=PG_PORT,
                                 durable=True)
        if cluster is None:
            redis.terminate()
            print("bench.scale: no PostgreSQL server installed; no figure", file=sys.stderr)
            return []
        sink = apis = None
        try:
            _psql("CREATE DATABASE herald")
            env = bench_env(f"postgresql://postgres@{DATA}:{PG_PORT}/herald",
                            f"redis://{DATA}:{REDIS_PORT}/0",
                            HERALD_EMAIL_PROVIDER=f"smtp://{DATA}:{SMTP_PORT}?tls=none",
                            # Never used: `herald serve` off loopback refuses the dev inbox.
                            HERALD_SMS_PROVIDER=f"twilio://AC{'0' * 32}:unused@")
            env.pop("PROMETHEUS_MULTIPROC_DIR", None)
            sink = Sink(env)
            _herald(env, "db", "upgrade")
            key = json.loads(_herald(env, "apply", "-", stdin=json.dumps(tenant())))[
                "apiKeys"][0]["key"]
            apis = [_start(name, env, "serve", "--host", address, "--port", str(API_PORT),
                           "--workers", "2") for name, address in APIS.items()]
            for address in APIS.values():
                _wait_answers(address)
            postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
            parts = {"api": apis[0].pid, "api2": apis[1].pid, "postgres": postmaster,
                     "redis": redis.pid, "smtp_sink": sink.proc.pid}
            for workers in COUNTS:
                rounds.append(_round(workers, env, key, sink, parts))
                print(json.dumps(rounds[-1]), flush=True)
            # The diagnosis: the same 4 workers with commits that do not wait for the disk.
            # If emails/s jumps, the database's commits were the bottleneck.
            _psql("ALTER SYSTEM SET synchronous_commit = off", "SELECT pg_reload_conf()")
            rounds.append({**_round(COUNTS[-1], env, key, sink, parts), "async_commit": True})
            print(json.dumps(rounds[-1]), flush=True)
            _psql("ALTER SYSTEM SET synchronous_commit = on", "SELECT pg_reload_conf()")
            slow = _slow_rounds(env, key, parts)
            rounds.extend(slow)
        finally:
            for proc in apis or []:
                _stop(proc)
            if sink is not None:
                sink.stop()
            cluster.remove()
            redis.terminate()
            redis.wait(timeout=30)
    base = rounds[0]["emails_per_s"] or None
    figures = []
    for row in rounds:
        if "sink_ms" in row:
            figures.append(figure(f"scale_emails_{row['workers']}w_sink_200ms",
                                  row["emails_per_s"], "emails/s (floor: bare client, "
                                  "32 threads)", row["floor"]))
            continue
        n = f"{row['workers']}w" + ("_async_commit" if row.get("async_commit") else "")
        figures.append(figure(f"scale_emails_{n}", row["emails_per_s"],
                              "emails/s (floor: 1 worker host)", base))
        figures.append(figure(f"scale_send_p99_{n}", row["p99"], "ms at the API", None))
        figures.append(figure(f"scale_send_rate_{n}", row["rate"], "req/s, 2 API hosts",
                              None))
    Path(__file__).with_name("scale_rounds.json").write_text(json.dumps(rounds, indent=2)
                                                             + "\n")
    return figures


if __name__ == "__main__":
    if sys.argv[1:2] == ["--load"]:
        _load_one(sys.argv[2], sys.argv[3])
    else:
        for row in run():
            print(row)
