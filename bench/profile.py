"""Where one send's time goes: a sampling profile of a gunicorn worker under the bench's load.

``python -m bench.profile [send|preview] [seconds]`` sets up what `bench api` sets up
(PostgreSQL when it answers, the bench's Redis, `herald serve`'s gunicorn configuration),
drives the endpoint with the bench's load generator and records one of the two gunicorn
workers with py-spy (installed on demand: a profiler, not a dependency of Herald) at 997
samples a second. It writes ``bench/profile-<what>.svg`` (a flame graph) and prints each
part's share of the worker's samples, grouped by the module that owns the frame
(docs/performance.md, "Where one send's time goes").
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from bench.api import bench_tenant, floor_server
from bench.common import (
    bench_database_url,
    bench_env,
    children_of,
    herald,
    redis_server,
    server,
)
from bench.loadgen import run_load
from bench.machine_cpu import cpu_per_request, print_cpu

HERE = Path(__file__).parent
PATHS = {"send": ("/api/v1/notifications/send", 202),
         "preview": ("/api/v1/notifications/preview", 200)}


def _py_spy() -> str:
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "py-spy"], check=True)
    return str(spy)


def _owner(frame: str) -> str:
    """The part a frame belongs to: Herald's top-level package, or a library's name."""
    path = frame.rsplit("(", 1)[-1].split(":")[0]
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/")[0].removesuffix(".py")
    if "/lib/python3" in path:
        return "stdlib:" + path.rsplit("/", 1)[-1].removesuffix(".py")
    for part in ("engine", "api", "channels", "plugins", "cli", "web"):
        marker = f"/{part}/"
        if marker in path:
            rest = path.split(marker, 1)[1]
            return f"{part}/{rest.rsplit('.', 1)[0]}"
    return path


def summarise(raw: Path, top: int = 25) -> list[tuple[str, float]]:
    """Self time per owning module, and the inclusive share of Herald's own functions."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        frames = stack.split(";")
        if not any("handle_request" in f or "wsgi_app" in f for f in frames):
            continue  # the worker's idle threads and gunicorn's own loop
        total += count
        own[_owner(frames[-1])] += count
        for name in {f.split(" (")[0] + " " + _owner(f) for f in frames
                     if any(p in f for p in ("/engine/", "/api/", "/channels/", "/plugins/"))}:
            inclusive[name] += count
    rows = [(f"self  {name}", 100 * n / total) for name, n in own.most_common(top)]
    rows += [(f"incl  {name}", 100 * n / total) for name, n in inclusive.most_common(top)]
    return rows


def account(what: str = "send", seconds: float = 6.0) -> None:
    """CPU per request by part of the machine: ``what`` (send or preview) and its floor, one
    after the other."""
    with bench_tenant() as (env, key, body), \
            server("cli.app:create_app", env) as (port, pid), \
            floor_server(env, port, key, body) as (floor_port, floor_pid):
        floor_pids = {floor_pid, *children_of(floor_pid)}
        pids = {pid, *children_of(pid)}
        subject_path, subject_expect = PATHS[what]
        floor_path, floor_expect = (("/enqueue-durable", 202) if what == "send"
                                    else ("/json-admitted", 200))
        run_load("127.0.0.1", port, subject_path, method="POST", body=body,
                 headers={"X-Api-Key": key}, expect=subject_expect, seconds=2, warmup=0)
        rows = {}
        # The floor gets the very request the subject gets (bench/api.py).
        for label, target, owned, path, expect in (
                ("floor", floor_port, floor_pids, floor_path, floor_expect),
                (what, port, pids, subject_path, subject_expect),
                ("floor ", floor_port, floor_pids, floor_path, floor_expect),
                (what + " ", port, pids, subject_path, subject_expect)):
            rows[label] = cpu_per_request(target, owned, path, body, {"X-Api-Key": key},
                                          expect, seconds)
    print_cpu(rows)


def account_web(seconds: float = 6.0) -> None:
    """CPU per request by part of the machine: the editor's preview of the 50 KB template
    (`web_preview`) and its floor, the API's preview of the same template, in turn."""
    from bench.web import editor_bench

    with editor_bench() as bench:
        pids = {bench.pid, *children_of(bench.pid)}
        api = ("/api/v1/notifications/preview", bench.api_body, bench.api_headers)
        editor = (bench.path, json.dumps(bench.form).encode(), bench.headers)
        rows = {}
        for label, (target, sent, sent_headers) in (
                ("API preview", api), ("web_preview", editor),
                ("API preview ", api), ("web_preview ", editor)):
            rows[label] = cpu_per_request(bench.port, pids, target, sent, sent_headers, 200,
                                          seconds)
    print_cpu(rows)


def in_process(what: str = "send", count: int = 2000, profile: bool = False) -> None:
    """CPU per request of ``what`` in this process, one thread, through the WSGI app as
    gunicorn calls it (no load generator, no server): the steadiest figure a busy machine
    gives, for comparing two versions of the code. ``profile``: cProfile's top functions."""
    import cProfile
    import io
    import os as _os
    import pstats
    import time

    with bench_tenant() as (env, key, body):
        _os.environ.update(env)
        from cli.app import create_app
        from engine.observability.log_format import configure_logging

        # Logging as `herald serve` configures it, its lines written to nowhere.
        stderr, sys.stderr = sys.stderr, open(_os.devnull, "w")  # noqa: SIM115
        try:
            configure_logging("text")
        finally:
            sys.stderr = stderr
        app = create_app()
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": PATHS[what][0], "SERVER_NAME": "x",
                   "SERVER_PORT": "80", "wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1",
                   "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
                   "HTTP_X_API_KEY": key, "SERVER_PROTOCOL": "HTTP/1.1"}

        def call() -> None:
            request = {**environ, "wsgi.input": io.BytesIO(body), "wsgi.errors": io.StringIO()}
            statuses = []
            for _chunk in app(request, lambda status, headers, *_: statuses.append(status)):
                pass
            assert statuses[0].startswith(str(PATHS[what][1])), statuses

        for _ in range(300):
            call()
        rounds = []
        for _ in range(10):
            started = time.process_time()
            for _ in range(count // 10):
                call()
            rounds.append(1e6 * (time.process_time() - started) / (count // 10))
        rounds.sort()
        print(f"{what}: µs of CPU per request in one thread, ten rounds: least {rounds[0]:.0f}, "
              f"median {rounds[5]:.0f}, most {rounds[-1]:.0f}")
        if profile:
            # CPU time, not wall time: on a shared machine a socket's wait is mostly
            # other processes' time.
            profiler = cProfile.Profile(time.thread_time)
            profiler.runcall(lambda: [call() for _ in range(count)])
            stats = pstats.Stats(profiler)
            stats.dump_stats(str(HERE / f"profile-{what}.pstats"))
            stats.sort_stats("tottime").print_stats(40)
            stats.sort_stats("cumulative").print_stats(90)


def keystrokes(seconds: float = 15.0) -> None:
    """The editor's preview of a new 50 KB text at each request (`web_preview_edit`), one
    connection, recorded as ``send`` is."""
    from bench import web

    spy = _py_spy()
    with web.editor_bench() as bench:
        stop = threading.Event()

        def type_on() -> None:
            count = 0
            while not stop.is_set():
                edits = [json.dumps({**bench.form, "body": web.BODY + f"<!-- {count} {n} -->"})
                         .encode() for n in range(20)]
                count += 1
                median = web._sequential_ms(bench.port, bench.path, edits, bench.headers)
                print(f"keystroke median {median:.1f} ms")

        typist = threading.Thread(target=type_on)
        typist.start()
        raw = HERE / "profile-edit.txt"
        try:
            for worker in children_of(bench.pid):
                subprocess.run([spy, "record", "-p", str(worker), "-r", "997", "-d",
                                str(int(seconds)), "--nonblocking", "--gil", "-o",
                                str(raw.with_suffix(f".{worker}.txt")), "-f", "raw"],
                               check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        finally:
            stop.set()
            typist.join()


def _worker_cpu(args: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one worker process run to its end."""
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(args)} failed")
    return usage.ru_utime + usage.ru_stime


def deliveries(jobs: int = 1000, record: bool = False) -> None:
    """CPU per email job of one burst `herald worker` (less an empty run) against RQ no-op
    jobs on the same worker class (bench.floor_worker); ``record``: a py-spy profile of an
    email run (bench/profile-worker.txt)."""
    import uuid

    from redis import Redis
    from rq import Queue

    from bench import delivery
    from bench.common import free_port
    from tests import factories
    from tests.support.smtp_server import start_smtp

    smtp, _ = start_smtp(free_port())
    database_url = bench_database_url()
    try:
        with redis_server() as redis:
            env = bench_env(database_url, redis.url,
                            HERALD_EMAIL_PROVIDER=f"smtp://127.0.0.1:{smtp.port}?tls=none")
            herald(env, "db", "upgrade")
            subject = [sys.executable, "-m", "engine.worker.worker", "--burst"]
            floor = [sys.executable, "-m", "bench.floor_worker"]
            rows = []
            for number in range(3):
                idle = _worker_cpu(subject, env)
                delivery._prepare(env, [factories.email_payload(subject=f"R {number}.{i}")
                                        for i in range(jobs)])
                if record and number == 2:
                    spy = _py_spy()
                    subprocess.run([spy, "record", "-r", "997", "--nonblocking", "--gil",
                                    "-f", "raw", "-o", str(HERE / "profile-worker.txt"), "--",
                                    *subject], env=env, check=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    continue
                busy = _worker_cpu(subject, env)
                floor_idle = _worker_cpu(floor, env)
                queue = Queue("bench-floor", connection=Redis.from_url(redis.url))
                with queue.connection.pipeline() as pipe:
                    for _ in range(jobs):
                        queue.enqueue("bench.floor_jobs.noop", "x", job_id=uuid.uuid4().hex,
                                      pipeline=pipe, result_ttl=0)
                    pipe.execute()
                floor_busy = _worker_cpu(floor, env)
                rows.append((1e6 * (busy - idle) / jobs, 1e6 * (floor_busy - floor_idle) / jobs))
            for email, noop in rows:
                print(f"µs of worker CPU per job: email {email:.0f}, RQ no-op {noop:.0f}, "
                      f"ratio {noop / email:.3f}")
    finally:
        smtp.stop()


def main(argv: list[str]) -> int:
    if argv and argv[0] == "worker":
        deliveries(record="--record" in argv)
        return 0
    if argv and argv[0] == "edit":
        keystrokes()
        return 0
    if argv and argv[0] == "cpu" and argv[1:2] == ["web"]:
        account_web()
        return 0
    if argv and argv[0] == "cpu":
        account(argv[1] if len(argv) > 1 else "send")
        return 0
    if argv and argv[0] == "table":
        from bench.table_cost import run as table_cost

        table_cost()
        return 0
    if argv and argv[0] == "inprocess":
        in_process(argv[1] if len(argv) > 1 else "send", profile="--profile" in argv)
        return 0
    what = argv[0] if argv else "send"
    seconds = float(argv[1]) if len(argv) > 1 else 20.0
    path, expect = PATHS[what]
    spy = _py_spy()
    with bench_tenant() as (env, key, body), server("cli.app:create_app", env) as (port, pid):
        run_load("127.0.0.1", port, path, method="POST", body=body,
                 headers={"X-Api-Key": key}, expect=expect, seconds=3, warmup=0)
        worker = children_of(pid)[0]
        load = threading.Thread(target=run_load, args=("127.0.0.1", port, path), kwargs=dict(
            method="POST", body=body, headers={"X-Api-Key": key}, expect=expect,
            seconds=seconds + 4, warmup=0))
        load.start()
        svg, raw = HERE / f"profile-{what}.svg", HERE / f"profile-{what}.txt"
        common = [spy, "record", "-p", str(worker), "-r", "997", "-d", str(int(seconds)),
                  "--nonblocking", "--gil"]
        subprocess.run([*common, "-o", str(raw), "-f", "raw"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        load.join()
        load = threading.Thread(target=run_load, args=("127.0.0.1", port, path), kwargs=dict(
            method="POST", body=body, headers={"X-Api-Key": key}, expect=expect,
            seconds=seconds + 4, warmup=0))
        load.start()
        subprocess.run([*common, "-o", str(svg)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        load.join()
    for name, share in summarise(raw):
        print(f"{share:6.1f}%  {name}")
    print(f"wrote {svg.name} and {raw.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
