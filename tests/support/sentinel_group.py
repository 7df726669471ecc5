"""A Redis primary, its replicas and three sentinels, each a real process on loopback.

Quick to fail over: a sentinel calls the primary down after ``DOWN_AFTER_MS`` of silence, and
two of the three must agree (the quorum) before one of them promotes a replica.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from redis import Redis

from engine.queue.embedded_redis import find_redis_server, free_port
from tests.support.processes import wait_for

SERVICE = "herald"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000


def _server(workdir: Path, name: str, port: int, *extra: str) -> subprocess.Popen:
    args = [find_redis_server(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(workdir), "--maxmemory-policy", "noeviction",
            "--logfile", str(workdir / f"{name}.log"), *extra]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _answers(port: int) -> bool:
    try:
        return bool(Redis(port=port, socket_timeout=0.5, socket_connect_timeout=0.5).ping())
    except Exception:  # not listening yet
        return False


@dataclass
class SentinelGroup:
    workdir: Path
    servers: dict[int, subprocess.Popen] = field(default_factory=dict)
    sentinels: dict[int, subprocess.Popen] = field(default_factory=dict)

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinels)
        return f"redis+sentinel://{hosts}/{SERVICE}/0"

    def primary_port(self) -> int | None:
        """The primary's port as a sentinel that answers names it."""
        for port in self.sentinels:
            try:
                sentinel = Redis(port=port, socket_timeout=0.5)
                return int(sentinel.sentinel_get_master_addr_by_name(SERVICE)[1])
            except Exception:  # this sentinel is busy or down: ask the next
                continue
        return None

    def shut_down(self, port: int) -> None:
        """The server ends as a crashed host's would: no save, no hand-over."""
        process = self.servers.pop(port)
        process.kill()
        process.wait(timeout=10)

    def stop(self) -> None:
        for process in [*self.sentinels.values(), *self.servers.values()]:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}"
                         for p in sorted(self.workdir.glob("*.log")))


def start_group(replicas: int = 1) -> SentinelGroup:
    """One primary, ``replicas`` replicas in sync with it, three sentinels watching."""
    group = SentinelGroup(Path(tempfile.mkdtemp(prefix="herald-sentinel-")))
    try:
        primary = free_port()
        group.servers[primary] = _server(group.workdir, "primary", primary)
        wait_for(lambda: _answers(primary), 15, "the primary")
        for n in range(replicas):
            port = free_port()
            group.servers[port] = _server(group.workdir, f"replica{n}", port,
                                          "--replicaof", "127.0.0.1", str(primary))
            wait_for(lambda port=port: Redis(port=port).info("replication").get(
                "master_link_status") == "up", 15, "the replica in sync")
        for n in range(3):
            port = free_port()
            conf = group.workdir / f"sentinel{n}.conf"  # the sentinel rewrites it: its own
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {group.workdir}\n"
                f"logfile {group.workdir / f'sentinel{n}.log'}\n"
                f"sentinel monitor {SERVICE} 127.0.0.1 {primary} 2\n"
                f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}\n"
                f"sentinel failover-timeout {SERVICE} {FAILOVER_TIMEOUT_MS}\n"
                f"sentinel parallel-syncs {SERVICE} 1\n")
            group.sentinels[port] = subprocess.Popen(
                [find_redis_server(), str(conf), "--sentinel"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True)
        for port in group.sentinels:
            # Each sentinel knows the replica and the two other sentinels: ready to vote.
            wait_for(lambda port=port: _knows_all(port, replicas), 30,
                     "the sentinels to find each other", group.log)
    except BaseException:
        group.stop()
        raise
    return group


def _knows_all(port: int, replicas: int) -> bool:
    try:
        state = Redis(port=port, socket_timeout=0.5).sentinel_master(SERVICE)
    except Exception:  # still starting
        return False
    return int(state["num-slaves"]) >= replicas and int(state["num-other-sentinels"]) >= 2
