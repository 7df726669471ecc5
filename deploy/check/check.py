"""CI's deployment check (`make deploy-check`): from the images `make images` built, run the
documented compose commands as written (deploy/herald-compose) under a project of its own,
with an SMTP server the check runs (compose.smtp.yaml): /readyz 200 on 127.0.0.1 and a send
that reaches that server; every container's hardening and health check, Redis refusing a
client without its password; the upgrade to a newer image (the new image's containers
answer, the data kept, PostgreSQL and Redis not restarted); a backup restored into a fresh
database (the tenant's key sends again); then the API and worker Deployments of
deploy/kubernetes/ under `podman kube play` against the same PostgreSQL and Redis (the
compose worker stopped, so the kube worker must deliver); and the systemd units verified
with Herald installed (the image's /opt/herald) and started as systemd would, in
production. Everything it started is removed at the end, pass or fail.

Every wait polls with a deadline; a failure prints the containers' logs and exits 1.
Environment: HERALD_CHECK_PORT (the API's host port, default 8000, or a free one when
something else holds 8000).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PROJECT = "herald-check"
NETWORK = f"{PROJECT}_default"
SECRET = "herald"  # the name deploy/kubernetes/ refers to (secretRef)
TENANT = "6f1e2d3c-4b5a-4697-8a1b-2c3d4e5f6a7b"  # deploy/check/tenant.yaml
TEMPLATE = "0a9b8c7d-6e5f-4a3b-9c1d-2e3f4a5b6c7d"


def free_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return free.getsockname()[1]


def _api_port() -> int:
    """HERALD_CHECK_PORT, else 8000, the compose file's; if something already listens
    there (a `herald dev` left running), a free port, said loudly, rather than a failure
    that is not the deployment's."""
    if "HERALD_CHECK_PORT" in os.environ:
        return int(os.environ["HERALD_CHECK_PORT"])
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8000)) != 0:
            return 8000
    port = free_port()
    print(f"deploy-check: NOTE: 127.0.0.1:8000 is taken; the API is published on {port}",
          flush=True)
    return port


PORT = _api_port()
# The wrapper docs/deploy.md tells operators to use, with the check's project and SMTP server.
COMPOSE = [str(DEPLOY / "herald-compose")]
IMAGE = os.environ.get("HERALD_IMAGE", "localhost/herald:latest")
APP = ("migrate", "api", "worker", "bounces")


class CheckFailed(Exception):
    pass


def run(*command: str, check: bool = True, stdin: str | None = None,
        quiet: bool = False) -> subprocess.CompletedProcess:
    proc = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise CheckFailed(f"{' '.join(command)} exited {proc.returncode}:\n"
                          f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    if not quiet and proc.returncode != 0:
        print(f"  ({' '.join(command[:4])}... exited {proc.returncode})", flush=True)
    return proc


def wait_for(what: str, probe: Callable[[], object], seconds: float) -> object:
    """Poll `probe` until it returns something truthy; CheckFailed naming `what` after
    `seconds` (with the last exception, if the probe raised)."""
    deadline = time.monotonic() + seconds
    last: object = None
    while time.monotonic() < deadline:
        try:
            result = probe()
            if result:
                return result
        except Exception as err:  # the service is not up yet: keep polling
            last = err
        time.sleep(1)
    raise CheckFailed(f"{what}: not within {seconds:g} s (last: {last!r})")


def http(url: str, body: dict | None = None, key: str | None = None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["X-Api-Key"] = key
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def send_body(marker: str) -> dict:
    return {"tenantId": TENANT, "templateId": TEMPLATE,
            "tags": [{"key": "marker", "value": marker}]}


def smtp_received(marker: str) -> bool:
    logs = run("podman", "logs", f"{PROJECT}_smtp_1", quiet=True)
    return f"Subject: Deploy check {marker}" in logs.stdout + logs.stderr


def env_file_values(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


def container(service: str) -> str:
    return f"{PROJECT}_{service}_1"


def inspect(name: str, template: str) -> str:
    return run("podman", "inspect", "--format", template, name).stdout.strip()


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
    answer = run("podman", "exec", container("bounces"), "python3", "-c", probe).stdout
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


def kube_play_file(workdir: Path) -> Path:
    """deploy/kubernetes/'s API and worker Deployments, one replica each, with a ConfigMap
    for the compose network. Podman 4.3 gives init containers the Pod's restart policy
    (it restarts `herald db wait` and then fails to remove it), so they are left out: the
    schema is already current, which is what they wait for."""
    documents: list[dict] = [{
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "herald"},
        "data": {**yaml.safe_load((DEPLOY / "kubernetes" / "configmap.yaml").read_text())["data"],
                 "HERALD_PUBLIC_URL": f"http://127.0.0.1:{PORT}",
                 # The compose stack's Redis wants its password.
                 "HERALD_REDIS_URL": env_file_values(workdir / "herald.env")["HERALD_REDIS_URL"]}}]
    for name in ("api.yaml", "worker.yaml"):
        for doc in yaml.safe_load_all((DEPLOY / "kubernetes" / name).read_text()):
            if doc["kind"] == "Deployment":
                doc["spec"]["replicas"] = 1
                doc["spec"]["template"]["spec"].pop("initContainers", None)
                # Podman publishes a containerPort on the host (8000, the compose API's):
                # a free loopback port instead.
                for container in doc["spec"]["template"]["spec"]["containers"]:
                    for port in container.get("ports", []):
                        port.update(hostIP="127.0.0.1", hostPort=free_port())
                documents.append(doc)
    path = workdir / "play.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return path


def check_kube_play(workdir: Path, env_file: Path, key: str) -> None:
    # kube play reads a secretRef from a podman secret holding {name: base64(value)}.
    env = env_file_values(env_file)
    secret = workdir / "secret.json"
    secret.write_text(json.dumps({
        name: base64.b64encode(env[name].encode()).decode()
        for name in ("HERALD_DATABASE_URL", "HERALD_SECRET_KEY", "HERALD_EMAIL_PROVIDER")}))
    run("podman", "secret", "create", SECRET, str(secret))
    run(*COMPOSE, "stop", "worker")
    run("podman", "kube", "play", "--network", NETWORK, str(kube_play_file(workdir)))
    api = "herald-api-pod-0-api"
    probe = ("import sys, urllib.request; "
             "sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=3).status"
             " != 200)")
    wait_for("/readyz 200 in the kube API Pod",
             lambda: run("podman", "exec", api, "python3", "-c", probe, check=False,
                         quiet=True).returncode == 0, 120)
    marker = uuid.uuid4().hex
    send = ("import json, sys, urllib.request; r = urllib.request.Request("
            "'http://127.0.0.1:8000/api/v1/notifications/send', data=sys.stdin.buffer.read(),"
            f" headers={{'Content-Type': 'application/json', 'X-Api-Key': {key!r}}}); "
            "print(urllib.request.urlopen(r, timeout=5).status)")
    sent = run("podman", "exec", "-i", api, "python3", "-c", send,
               stdin=json.dumps(send_body(marker)))
    if sent.stdout.strip() != "202":
        raise CheckFailed(f"send in the kube API Pod answered {sent.stdout!r}")
    wait_for("the kube worker's send at the SMTP server", lambda: smtp_received(marker), 60)
    print("kube play: API Pod ready, its send delivered by the worker Pod", flush=True)


def check_systemd(workdir: Path) -> None:
    """deploy/systemd/ verified by `systemd-analyze verify` in a root holding the image's
    Herald (/opt/herald, installed from the wheel) and systemd's own units; then each
    service's ExecStart run in that image as systemd would run it, the env file saying
    HERALD_ENV=development and holding no key: production's refusal must answer. (No
    systemd runs as PID 1 here, so the units are not started by systemd itself.)"""
    import shlex

    root = workdir / "root"
    shutil.copytree("/usr/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True)
    shutil.copytree(DEPLOY / "systemd", root / "etc/systemd/system")
    for tool in ("/usr/bin/env", "/bin/sh"):  # ExecStart's first words
        (root / tool[1:]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(tool, root / tool[1:])
    (root / "opt").mkdir()
    created = run("podman", "create", IMAGE).stdout.strip()
    try:
        run("podman", "cp", f"{created}:/opt/herald", str(root / "opt"))
    finally:
        run("podman", "rm", created, check=False, quiet=True)
    units = sorted(p.name for p in (DEPLOY / "systemd").iterdir())
    verified = run("systemd-analyze", "verify", f"--root={root}", *units, check=False)
    if verified.returncode != 0 or verified.stdout + verified.stderr:
        raise CheckFailed(f"systemd-analyze verify: {verified.stdout}{verified.stderr}")
    if not (root / "opt/herald/bin/herald").is_file():
        raise CheckFailed("the image holds no /opt/herald/bin/herald")
    development = workdir / "systemd.env"
    development.write_text("HERALD_ENV=development\n")
    for unit in units:
        if not unit.endswith(".service") or unit == "herald-backup.service":
            continue
        [line] = [ln for ln in (DEPLOY / "systemd" / unit).read_text().splitlines()
                  if ln.startswith("ExecStart=")]
        argv = shlex.split(line.removeprefix("ExecStart="))
        started = run("podman", "run", "--rm", "--env-file", str(development),
                      "--entrypoint", argv[0], IMAGE, *argv[1:], check=False, quiet=True)
        if started.returncode != 2 or "is required in production" not in started.stderr:
            raise CheckFailed(f"{unit} did not start in production: exit "
                              f"{started.returncode}, {started.stderr[-500:]}")
    print(f"systemd: {len(units)} units verified with the image's Herald; each service "
          "starts in production whatever its env file says", flush=True)


def show_logs() -> None:
    names = run("podman", "ps", "-a", "--format", "{{.Names}}", check=False, quiet=True)
    for name in names.stdout.split():
        if name.startswith((PROJECT, "herald-api-pod", "herald-worker-pod")) and \
                not name.endswith("-infra"):
            logs = run("podman", "logs", "--tail", "30", name, check=False, quiet=True)
            print(f"--- {name}\n{logs.stdout}{logs.stderr}", file=sys.stderr)


# The image `latest` named before the upgrade's newer one took the tag, and that newer one.
IMAGES: dict[str, str] = {}


def clean_up(play: Path | None) -> None:
    if play is not None and play.exists():
        run("podman", "kube", "down", str(play), check=False, quiet=True)
    for pod in ("herald-api-pod-0", "herald-worker-pod-0"):
        run("podman", "pod", "rm", "--force", "--ignore", pod, check=False, quiet=True)
    run("podman", "secret", "rm", SECRET, check=False, quiet=True)
    run(*COMPOSE, "down", "-v", check=False, quiet=True)
    # Whatever `down` left (a container it did not know), then the volumes and network.
    left = run("podman", "ps", "-aq", "--filter", f"label=io.podman.compose.project={PROJECT}",
               check=False, quiet=True).stdout.split()
    if left:
        run("podman", "rm", "--force", *left, check=False, quiet=True)
    for volume in ("pgdata", "redisdata", "caddydata"):
        run("podman", "volume", "rm", "--force", f"{PROJECT}_{volume}", check=False, quiet=True)
    run("podman", "network", "rm", "--force", NETWORK, check=False, quiet=True)
    if "original" in IMAGES:  # the image `make images` built is `latest` again
        run("podman", "tag", IMAGES["original"], IMAGE, check=False, quiet=True)
    if "newer" in IMAGES:
        run("podman", "rmi", "--force", IMAGES["newer"], check=False, quiet=True)


def main() -> int:
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="herald-deploy-check-"))
    env_file = workdir / "herald.env"
    os.environ.setdefault("CONTAINERS_CONF", str(DEPLOY / "podman" / "containers.conf"))
    os.environ.update({"HERALD_ENV_FILE": str(env_file), "HERALD_API_PORT": str(PORT),
                       "HERALD_POSTGRES_ENV_FILE": str(workdir / "postgres.env"),
                       "HERALD_REDIS_ENV_FILE": str(workdir / "redis.env"),
                       "COMPOSE_PROJECT_NAME": PROJECT,
                       "HERALD_COMPOSE_EXTRA": str(DEPLOY / "check" / "compose.smtp.yaml"),
                       "HERALD_BOUNCES_PUBLISH": "127.0.0.1::2525",
                       "HERALD_HTTPS_PUBLISH": "127.0.0.1::8443",
                       "HERALD_HTTP_PUBLISH": "127.0.0.1::8080",
                       "HERALD_WORKER_METRICS_PUBLISH": "127.0.0.1::9100",
                       "HERALD_DOMAIN": "localhost"})
    play = workdir / "play.yaml"
    clean_up(None)  # a run that was killed may have left its stack
    try:
        run(str(DEPLOY / "make-env"), str(env_file),
            "HERALD_EMAIL_PROVIDER=smtp://smtp:2525?tls=none")
        check_image()
        check_systemd(workdir)
        key = check_compose()
        check_hardening(env_file)
        check_tls_and_metrics(workdir, env_file)
        check_upgrade(key)
        check_scheduled_backups(env_file)
        check_backup_restore(workdir, key)
        check_kube_play(workdir, env_file, key)
    except CheckFailed as err:
        show_logs()
        print(f"deploy-check: FAILED: {err}", file=sys.stderr)
        return 1
    finally:
        clean_up(play)
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"deploy-check: passed in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
