"""A PostgreSQL cluster of the test's own (initdb + pg_ctl on a free loopback port), so a
test may stop and restart it without touching the shared server other tests use."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.queue.embedded_redis import free_port


def find_bin(name: str) -> str | None:
    """``name`` from the newest PostgreSQL server installed (Debian's layout), or PATH."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                   key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit()
                   else 0)
    return found[-1] if found else shutil.which(name)


def _as_owner(args: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: the cluster belongs to the postgres user then."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


@dataclass
class PrivatePostgres:
    workdir: Path
    port: int
    listen: str = "127.0.0.1"  # bench/scale.py: the data host's address in its namespace
    prefix: tuple[str, ...] = ()  # a command that runs pg_ctl there (ip netns exec NAME)
    durable: bool = False  # fsync on: the bench's commits cost what production's do

    @property
    def data(self) -> Path:
        return self.workdir / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@{self.listen}:{self.port}/{database}"

    def _ctl(self, *args: str, timeout: float = 60) -> None:
        log = self.workdir / "server.log"
        subprocess.run([*self.prefix, *_as_owner([find_bin("pg_ctl") or "pg_ctl", "-D",
                                                  str(self.data), "-l", str(log), "-w", "-t",
                                                  "30", *args])],
                       check=True, capture_output=True, timeout=timeout)

    def start(self) -> None:
        sync = "" if self.durable else "-c fsync=off -c full_page_writes=off "
        self._ctl("-o", f"-p {self.port} -k {self.workdir} -c listen_addresses={self.listen} "
                        f"{sync}-c max_connections=300", "start")

    def stop(self, mode: str = "fast") -> None:
        self._ctl("-m", mode, "stop")

    def restart(self) -> None:
        """Fast: sessions are cut and open transactions rolled back, as in a failover."""
        self.stop()
        self.start()

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.CalledProcessError):  # already down
                self.stop("immediate")
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log(self) -> str:
        path = self.workdir / "server.log"
        return path.read_text()[-3000:] if path.exists() else ""


def start_postgres(listen: str = "127.0.0.1", prefix: tuple[str, ...] = (),
                   port: int | None = None, durable: bool = False) -> PrivatePostgres | None:
    """A new cluster, started; None when no PostgreSQL server is installed. Clients from
    ``listen``'s /24 are trusted (the bench's namespaces)."""
    initdb = find_bin("initdb")
    if initdb is None or find_bin("pg_ctl") is None:
        return None
    workdir = Path(tempfile.mkdtemp(prefix="herald-pg-"))
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(workdir, owner.pw_uid, owner.pw_gid)
    cluster = PrivatePostgres(workdir, port or free_port(), listen, prefix, durable)
    try:
        subprocess.run(_as_owner([initdb, "-D", str(cluster.data), "-U", "postgres",
                                  "--auth=trust", "--no-sync", "-E", "UTF8"]),
                       check=True, capture_output=True, timeout=120)
        if listen != "127.0.0.1":
            subnet = listen.rsplit(".", 1)[0] + ".0/24"
            with (cluster.data / "pg_hba.conf").open("a") as hba:
                hba.write(f"host all all {subnet} trust\n")
        cluster.start()
    except BaseException:
        cluster.remove()
        raise
    return cluster
