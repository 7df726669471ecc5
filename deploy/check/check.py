"""CI's deployment check (`make deploy-check`): from the images `make images` built, bring
deploy/compose.yaml up under a project of its own, with an SMTP server the check runs
(compose.smtp.yaml); require /readyz 200 on 127.0.0.1 and a send that reaches that server;
then run the API and worker Deployments of deploy/kubernetes/ under `podman kube play`
against the same PostgreSQL and Redis (the compose worker stopped, so the kube worker must
deliver) and require the same. Everything it started is removed at the end, pass or fail.

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
COMPOSE = ["podman-compose", "-p", PROJECT, "-f", str(DEPLOY / "compose.yaml"),
           "-f", str(DEPLOY / "check" / "compose.smtp.yaml")]


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


def check_image() -> None:
    """Herald's image: a non-root user, a health check on /healthz, no compiler."""
    image = os.environ.get("HERALD_IMAGE", "localhost/herald:latest")
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
    wait_for(f"/readyz 200 on 127.0.0.1:{PORT}",
                      lambda: http(f"http://127.0.0.1:{PORT}/readyz")[0] == 200, 240)
    print(f"compose: /readyz 200 after {time.monotonic() - started:.0f} s", flush=True)
    applied = run("podman", "exec", "-i", f"{PROJECT}_api_1", "herald", "apply", "-",
                  stdin=(DEPLOY / "check" / "tenant.yaml").read_text())
    key = json.loads(applied.stdout)["apiKeys"][0]["key"]
    marker = uuid.uuid4().hex
    status, body = http(f"http://127.0.0.1:{PORT}/api/v1/notifications/send", send_body(marker),
                        key)
    if status != 202:
        raise CheckFailed(f"send answered {status}: {body}")
    wait_for("the send at the SMTP server", lambda: smtp_received(marker), 60)
    print("compose: the send reached the SMTP server", flush=True)
    return key


def kube_play_file(workdir: Path) -> Path:
    """deploy/kubernetes/'s API and worker Deployments, one replica each, with a ConfigMap
    for the compose network. Podman 4.3 gives init containers the Pod's restart policy
    (it restarts `herald db wait` and then fails to remove it), so they are left out: the
    schema is already current, which is what they wait for."""
    documents: list[dict] = [{
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "herald"},
        "data": {**yaml.safe_load((DEPLOY / "kubernetes" / "configmap.yaml").read_text())["data"],
                 "HERALD_PUBLIC_URL": f"http://127.0.0.1:{PORT}"}}]
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
    run("podman", "stop", "--time", "30", f"{PROJECT}_worker_1")
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


def show_logs() -> None:
    names = run("podman", "ps", "-a", "--format", "{{.Names}}", check=False, quiet=True)
    for name in names.stdout.split():
        if name.startswith((PROJECT, "herald-api-pod", "herald-worker-pod")) and \
                not name.endswith("-infra"):
            logs = run("podman", "logs", "--tail", "30", name, check=False, quiet=True)
            print(f"--- {name}\n{logs.stdout}{logs.stderr}", file=sys.stderr)


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
    for volume in ("pgdata", "redisdata"):
        run("podman", "volume", "rm", "--force", f"{PROJECT}_{volume}", check=False, quiet=True)
    run("podman", "network", "rm", "--force", NETWORK, check=False, quiet=True)


def main() -> int:
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="herald-deploy-check-"))
    env_file = workdir / "herald.env"
    os.environ.setdefault("CONTAINERS_CONF", str(DEPLOY / "podman" / "containers.conf"))
    os.environ.update({"HERALD_ENV_FILE": str(env_file), "HERALD_API_PORT": str(PORT),
                       "HERALD_BOUNCES_PUBLISH": "127.0.0.1::2525"})
    play = workdir / "play.yaml"
    clean_up(None)  # a run that was killed may have left its stack
    try:
        run(str(DEPLOY / "make-env"), str(env_file),
            "HERALD_EMAIL_PROVIDER=smtp://smtp:2525?tls=none")
        check_image()
        key = check_compose()
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
