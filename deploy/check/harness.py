"""What every step of the deployment check uses: the names the stack is run under, commands
run and shown, waits with a deadline, HTTP to the API and the SMTP server's mailbox."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

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


# The image `latest` named before the upgrade's newer one took the tag, and that newer one.
IMAGES: dict[str, str] = {}
