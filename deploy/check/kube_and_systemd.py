"""The deployment check's other two deployments: the Kubernetes manifests under
`podman kube play` against the compose stack's PostgreSQL and Redis, and the systemd
units verified and started as systemd would."""

from __future__ import annotations

import base64
import json
import shutil
import uuid
from pathlib import Path

import yaml
from harness import (
    COMPOSE,
    DEPLOY,
    IMAGE,
    NETWORK,
    PORT,
    SECRET,
    CheckFailed,
    env_file_values,
    free_port,
    run,
    send_body,
    smtp_received,
    wait_for,
)


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
    # kube play reads a secretRef from a podman secret holding {name: base64(value)}. The
    # worker's manifest publishes its /metrics, so it starts only with the metrics token.
    env = env_file_values(env_file)
    secret = workdir / "secret.json"
    secret.write_text(json.dumps({
        name: base64.b64encode(env[name].encode()).decode()
        for name in ("HERALD_DATABASE_URL", "HERALD_SECRET_KEY", "HERALD_EMAIL_PROVIDER",
                     "HERALD_METRICS_TOKEN")}))
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
