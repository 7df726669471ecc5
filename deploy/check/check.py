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

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from compose_steps import (
    check_backup_restore,
    check_compose,
    check_hardening,
    check_image,
    check_scheduled_backups,
    check_tls_and_metrics,
    check_upgrade,
)
from harness import COMPOSE, DEPLOY, IMAGE, IMAGES, NETWORK, PORT, PROJECT, SECRET, CheckFailed, run
from kube_and_systemd import check_kube_play, check_systemd


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
