"""Instructions per request of the API's send or preview: the one count a busy machine
does not move.

``python -m bench.instructions [send|preview] [count]`` runs the requests in one process
through the WSGI app, as ``bench.profile inprocess`` does, under valgrind's callgrind
(valgrind itself is not installed by the bench), with counting switched on only around
``count`` requests (300 by default) after 200 of warm-up. The figure is every user-space
instruction of that process (Python, its C modules, the database and Redis clients);
PostgreSQL's and Redis's own work and the kernel's are left out. Under callgrind a request
takes about a hundred times longer, so the per-process caches' answers are kept for the
whole run, as a busy server keeps them between its requests.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.api import bench_tenant
from bench.profile import PATHS


def _child(what: str, count: int) -> None:
    """The measured process: warm up, then ``count`` requests between two handshakes."""
    with bench_tenant() as (env, key, body):
        os.environ.update(env)
        from cli.app import create_app
        from engine import runtime
        from engine.observability.log_format import configure_logging

        configure_logging("text")  # as `herald serve` logs, its lines to stderr (discarded)
        app = create_app()
        object.__setattr__(runtime.settings(), "key_cache_seconds", 1e9)
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": PATHS[what][0], "SERVER_NAME": "x",
                   "SERVER_PORT": "80", "wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1",
                   "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
                   "HTTP_X_API_KEY": key, "SERVER_PROTOCOL": "HTTP/1.1"}
        statuses: list[str] = []

        def call() -> None:
            request = {**environ, "wsgi.input": io.BytesIO(body), "wsgi.errors": io.StringIO()}
            for _chunk in app(request, lambda status, *_: statuses.append(status)):
                pass

        for _ in range(200):
            call()
        print("ready", flush=True)
        sys.stdin.readline()
        for _ in range(count):
            call()
        print("done", flush=True)
        sys.stdin.readline()
        assert all(s.startswith(str(PATHS[what][1])) for s in statuses), set(statuses)


def measure(what: str = "send", count: int = 300) -> int:
    """Instructions per request of ``what``."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        child = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no",
             f"--callgrind-out-file={out}", sys.executable, "-m", "bench.instructions",
             "--child", what, str(count)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        assert child.stdin is not None and child.stdout is not None
        for switch, expected in (("on", "ready"), ("off", "done")):
            line = child.stdout.readline().strip()
            if line != expected:
                raise RuntimeError(f"the measured process said {line!r}")
            subprocess.run(["callgrind_control", "-i", switch, str(child.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            child.stdin.write("\n")
            child.stdin.flush()
        if child.wait() != 0:
            raise RuntimeError("the measured process failed")
        totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
        return int(totals[0].split()[1]) // count


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        _child(argv[1], int(argv[2]))
        return 0
    what = argv[0] if argv else "send"
    count = int(argv[1]) if len(argv) > 1 else 300
    print(f"{what}: {measure(what, count):,} instructions per request")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
