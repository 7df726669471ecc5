"""The deployment check's compose steps: the image, the stack up as documented, its
hardening, TLS and metrics, the upgrade, the backup timer and a backup restored."""

from __future__ import annotations

import json
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import yaml
from harness import (
    APP,
    COMPOSE,
    DEPLOY,
    IMAGE,
    IMAGES,
    PORT,
    CheckFailed,
    container,
    env_file_values,
    http,
    inspect,
    run,
    send_body,
    smtp_received,
    wait_for,
)


def check_image() -> None:
    """Herald's image: a non-root user, a health check on /healthz, no compiler."""
    image = IMAGE
    facts = run("podman", "image", "inspect", "--format",
                "{{.User}}|{{.HealthCheck.Test}}|{{.Size}}", image).stdout.strip()
    user, health, size = facts.split("|")
    if user.split(":")[0] in ("", "0", "root"):
        raise CheckFailed(f"the image runs as {user or 'root'}")
    if "/healthz" not in health:
        raise CheckFailed(f"the image's health check is {health!r}")
    compilers = run("podman", "run", "--rm", "--entrypoint", "sh", image, "-c",
                    "for c in gcc cc c++ clang tcc; do command -v $c; done; true").stdout.split()
    if compilers:
        raise CheckFailed(f"the image holds compilers: {compilers}")
    print(f"image: user {user}, health check on /healthz, no compiler, "
          f"{int(size) / 1e6:.0f} MB", flush=True)


def check_compose() -> str:
    """The stack up; /readyz; a tenant; a send through 127.0.0.1 to the SMTP server."""
    started = time.monotonic()
    run(*COMPOSE, "up", "-d")
    wait_ready()
    print(f"compose: /readyz 200 after {time.monotonic() - started:.0f} s", flush=True)
    # As documented: `deploy/herald-compose herald apply - < tenant.yaml`, whose standard
    # output is apply's JSON alone.
    applied = run(*COMPOSE, "herald", "apply", "-",
                  stdin=(DEPLOY / "check" / "tenant.yaml").read_text())
    key = json.loads(applied.stdout)["apiKeys"][0]["key"]
    send_and_receive(key, "compose")
    return key


def wait_ready() -> None:
    wait_for(f"/readyz 200 on 127.0.0.1:{PORT}",
             lambda: http(f"http://127.0.0.1:{PORT}/readyz")[0] == 200, 240)


def send_and_receive(key: str, what: str) -> None:
    marker = uuid.uuid4().hex
    status, body = http(f"http://127.0.0.1:{PORT}/api/v1/notifications/send", send_body(marker),
                        key)
    if status != 202:
        raise CheckFailed(f"{what}: send answered {status}: {body}")
    wait_for(f"{what}: the send at the SMTP server", lambda: smtp_received(marker), 60)
    print(f"{what}: the send reached the SMTP server", flush=True)


def check_hardening(env_file: Path) -> None:
    """Each container: no capability, a read-only root (all but none), memory and process
    limits; PostgreSQL and Redis see none of Herald's secrets; Redis refuses a client
    without its password (from the internet-facing bounce listener's container); health
    checks where a process can be asked, none that asks an HTTP server that is not there."""
    secret = env_file_values(env_file)["HERALD_SECRET_KEY"]
    for service in ("postgres", "redis", *APP[1:], "caddy"):
        name = container(service)
        caps, read_only, memory, pids = inspect(
            name, "{{.EffectiveCaps}}|{{.HostConfig.ReadonlyRootfs}}|{{.HostConfig.Memory}}|"
                  "{{.HostConfig.PidsLimit}}").split("|")
        if caps not in ("[]", "<no value>", ""):
            raise CheckFailed(f"{name} keeps capabilities {caps}")
        if read_only != "true" or int(memory) <= 0 or int(pids) <= 0:
            raise CheckFailed(f"{name}: read-only {read_only}, memory {memory}, pids {pids}")
        environment = inspect(name, "{{range .Config.Env}}{{println .}}{{end}}")
        if service in ("postgres", "redis") and ("HERALD_" in environment or secret in
                                                 environment):
            raise CheckFailed(f"{name} receives Herald's settings")
    probe = ("import socket; s = socket.create_connection(('redis', 6379), 5); "
             "s.sendall(b'PING\\r\\n'); print(s.recv(100).decode().strip())")
    # The compose network's name server can take a moment to know a container that just
    # started (a fresh machine's first stack): asked again until the name resolves.
    answer = str(wait_for("Redis from the bounce listener's container", lambda: run(
        "podman", "exec", container("bounces"), "python3", "-c", probe).stdout, 30))
    if "NOAUTH" not in answer:
        raise CheckFailed(f"Redis answered a client without its password: {answer!r}")
    for service in ("postgres", "redis", "api", "bounces"):
        wait_for(f"{service}'s health check", lambda s=service: run(
            "podman", "healthcheck", "run", container(s), check=False,
            quiet=True).returncode == 0, 60)
    for service in ("migrate", "worker"):
        check = inspect(container(service), "{{.Config.Healthcheck}}")
        if "healthz" in check:
            raise CheckFailed(f"{service} keeps the image's HTTP health check: {check}")
    print("compose: no capabilities, read-only roots, limits, Redis wants its password, "
          "health checks right", flush=True)


def check_tls_and_metrics(workdir: Path, env_file: Path) -> None:
    """Caddy answers HTTPS for localhost with a certificate of its own CA and passes
    /readyz to the API; plain HTTP redirects to HTTPS; the worker's metrics port answers
    the token make-env wrote, and refuses a request without it."""
    import ssl

    def published(port: int) -> int:
        return int(run("podman", "port", container("caddy"), str(port)).stdout.strip()
                   .rsplit(":", 1)[1])

    https, plain = published(8443), published(8080)
    root = "/data/caddy/pki/authorities/local/root.crt"
    ca = workdir / "caddy-root.crt"

    def ready_over_tls() -> bool:
        if not ca.exists():
            pem = run("podman", "exec", container("caddy"), "cat", root, check=False,
                      quiet=True).stdout
            if "BEGIN CERTIFICATE" not in pem:
                return False
            ca.write_text(pem)
        context = ssl.create_default_context(cafile=str(ca))
        with urllib.request.urlopen(f"https://localhost:{https}/readyz", context=context,
                                    timeout=5) as answer:
            return answer.status == 200

    wait_for("/readyz 200 over HTTPS through Caddy", ready_over_tls, 120)

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # keep the 308 to look at
            return None

    try:
        urllib.request.build_opener(NoRedirect).open(f"http://localhost:{plain}/readyz",
                                                     timeout=5)
        raise CheckFailed("plain HTTP answered without a redirect")
    except urllib.error.HTTPError as err:
        if err.code != 308 or not err.headers["Location"].startswith("https://localhost/"):
            raise CheckFailed(f"plain HTTP answered {err.code} "
                              f"{err.headers['Location']}") from None
    token = env_file_values(env_file)["HERALD_METRICS_TOKEN"]
    scrape = ("import sys, urllib.request, urllib.error\n"
              "def get(headers):\n"
              "    try:\n"
              "        return urllib.request.urlopen(urllib.request.Request("
              "'http://127.0.0.1:9100/metrics', headers=headers), timeout=5).status\n"
              "    except urllib.error.HTTPError as err:\n"
              "        return err.code\n"
              "print(get({}), get({'Authorization': 'Bearer ' + sys.argv[1]}))\n")
    statuses = wait_for("the worker's metrics port", lambda: run(
        "podman", "exec", container("worker"), "python3", "-c", scrape, token,
        check=False, quiet=True).stdout.split() or None, 60)
    if statuses[0] == "200" or statuses[1] != "200":
        raise CheckFailed(f"the worker's /metrics answered {statuses} (no token, token)")
    print(f"tls: /readyz 200 over HTTPS (Caddy, port {https}), HTTP redirects; the worker's "
          "metrics port wants its token", flush=True)


def check_upgrade(key: str) -> None:
    """`make images` then `deploy/herald-compose upgrade`, as docs/deploy.md says: a newer
    image (the current one plus a label and a variable, so its id differs) tagged as the
    compose file's, Herald's containers remade from it, PostgreSQL and Redis untouched, the
    tenant's key still sending. The newer image is removed at the end."""
    original = IMAGES["original"] = inspect(IMAGE, "{{.Id}}")
    with tempfile.TemporaryDirectory() as context:
        Path(context, "Containerfile").write_text(
            f"FROM {original}\nLABEL org.herald.check=upgrade\nENV HERALD_CHECK_RELEASE=newer\n")
        build = run("podman", "build", "--quiet", "-t", IMAGE, context)
    newer = IMAGES["newer"] = inspect(IMAGE, "{{.Id}}")
    if newer == original:
        raise CheckFailed(f"the newer image has the old id: {build.stdout}")
    kept = {s: inspect(container(s), "{{.State.StartedAt}}") for s in ("postgres", "redis")}
    started = time.monotonic()
    run(*COMPOSE, "upgrade")
    wait_ready()
    for service in ("api", "worker", "bounces"):
        if inspect(container(service), "{{.Image}}") != newer:
            raise CheckFailed(f"{service} still runs the old image after the upgrade")
    release = run("podman", "exec", container("api"), "printenv", "HERALD_CHECK_RELEASE")
    if release.stdout.strip() != "newer":
        raise CheckFailed("the API's process is not the newer image's")
    for service, at in kept.items():
        if inspect(container(service), "{{.State.StartedAt}}") != at:
            raise CheckFailed(f"the upgrade restarted {service}")
    print(f"upgrade: the newer image's API ready after {time.monotonic() - started:.0f} s, "
          "PostgreSQL and Redis not restarted", flush=True)
    send_and_receive(key, "upgrade")
    run("podman", "tag", original, IMAGE)  # the rest of the check runs the image built


def check_scheduled_backups(env_file: Path) -> None:
    """The systemd backup unit's and the Kubernetes CronJob's scripts, as written, run in
    the compose stack's PostgreSQL container (its pg_dump): each leaves one custom-format
    dump, mode 0600, where it says."""
    import shlex

    url = env_file_values(env_file)["HERALD_DATABASE_URL"].replace("@postgres:", "@127.0.0.1:")
    [line] = [ln for ln in (DEPLOY / "systemd" / "herald-backup.service").read_text()
              .splitlines() if ln.startswith("ExecStart=")]
    unit = shlex.split(line.removeprefix("ExecStart="))[2].replace("$$", "$").replace("%%", "%")
    cron = yaml.safe_load_all((DEPLOY / "kubernetes" / "backup-cronjob.yaml").read_text())
    [job] = [d for d in cron if d["kind"] == "CronJob"]
    script = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"][0]
    for what, folder, text in (("systemd", "/tmp/unit", unit),
                               ("CronJob", "/tmp/cron", script.replace("/backups", "/tmp/cron"))):
        listing = run("podman", "exec", "-e", f"STATE_DIRECTORY={folder}", "-e",
                      f"HERALD_DATABASE_URL={url}", container("postgres"), "sh", "-c",
                      f"mkdir -p {folder} && {text} && stat -c '%a %n' {folder}/*").stdout.split()
        if len(listing) != 2 or listing[0] != "600" or not listing[1].endswith(".dump"):
            raise CheckFailed(f"the {what} backup left {listing}")
    print("backups: the systemd unit's and the CronJob's scripts each wrote a 0600 dump",
          flush=True)


def check_backup_restore(workdir: Path, key: str) -> None:
    """`deploy/herald-compose backup FILE`, the stack and its volumes removed, a fresh
    PostgreSQL, `restore FILE`, `up -d`: the tenant's key sends again."""
    dump = workdir / "herald.dump"
    run(*COMPOSE, "backup", str(dump))
    mode = dump.stat().st_mode & 0o777
    if mode & 0o077 or not dump.read_bytes().startswith(b"PGDMP"):
        raise CheckFailed(f"the dump is mode {mode:o} or not pg_dump's custom format")
    run(*COMPOSE, "down", "-v")
    run(*COMPOSE, "up", "-d", "postgres")
    wait_for("a fresh PostgreSQL", lambda: run(
        "podman", "exec", container("postgres"), "pg_isready", "-q", "-h", "127.0.0.1",
        check=False, quiet=True).returncode == 0, 120)
    fresh = run("podman", "exec", container("postgres"), "psql", "-U", "herald", "-tAc",
                "select count(*) from information_schema.tables where table_schema='public'")
    if fresh.stdout.strip() != "0":
        raise CheckFailed(f"the database was not fresh: {fresh.stdout}")
    run(*COMPOSE, "restore", str(dump))
    run(*COMPOSE, "up", "-d")
    wait_ready()
    print(f"backup: a {dump.stat().st_size} byte dump (mode {mode:o}) restored into a fresh "
          "database", flush=True)
    send_and_receive(key, "restore")
