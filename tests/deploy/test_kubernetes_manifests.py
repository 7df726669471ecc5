"""deploy/kubernetes/: valid under kubernetes-validate --strict, and the operational parts
the issue asks of them (probes, resources, a non-root user, the migration Job, a PDB)."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest

from tests.deploy.manifests import KUBERNETES, by_kind, plain_objects, schema_errors

OBJECTS = plain_objects()


def test_the_files_pass_the_strict_command_line_check():
    proc = subprocess.run([sys.executable, "-m", "kubernetes_validate", "--strict",
                           *map(str, sorted(KUBERNETES.glob("*.yaml")))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("passed") == len(OBJECTS)


def test_the_strict_check_refuses_a_field_kubernetes_does_not_know():
    deployment = copy.deepcopy(by_kind(OBJECTS, "Deployment")["herald-api"])
    deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbes"] = {}
    assert "livenessProbes" in (schema_errors(deployment) or "")


def test_every_kind_the_issue_names_is_there():
    kinds = {(o["kind"], o["metadata"]["name"]) for o in OBJECTS}
    assert kinds == {("Deployment", "herald-api"), ("Deployment", "herald-worker"),
                     ("Job", "herald-db-upgrade"), ("Service", "herald-api"),
                     ("Secret", "herald"), ("ConfigMap", "herald"),
                     ("PodDisruptionBudget", "herald-api"),
                     ("PodDisruptionBudget", "herald-worker"),
                     ("Ingress", "herald"), ("CronJob", "herald-backup"),
                     ("PersistentVolumeClaim", "herald-backups")}


def _pod_specs():
    for obj in OBJECTS:
        if obj["kind"] in ("Deployment", "Job"):
            yield obj["metadata"]["name"], obj["spec"]["template"]["spec"]
        elif obj["kind"] == "CronJob":
            yield obj["metadata"]["name"], obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]


@pytest.mark.parametrize(("name", "pod"), list(_pod_specs()))
def test_every_container_runs_as_the_image_user_with_resources_and_no_privileges(name, pod):
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 10001
    for container in pod.get("initContainers", []) + pod["containers"]:
        assert container["resources"]["requests"] and container["resources"]["limits"]
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]


def test_the_api_probes_healthz_for_liveness_and_readyz_for_readiness():
    api = by_kind(OBJECTS, "Deployment")["herald-api"]["spec"]["template"]["spec"]
    (container,) = api["containers"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["args"][0] == "serve"


def test_the_job_migrates_and_the_pods_wait_for_it():
    job = by_kind(OBJECTS, "Job")["herald-db-upgrade"]["spec"]["template"]["spec"]
    assert job["containers"][0]["args"][:2] == ["db", "upgrade"]
    for name in ("herald-api", "herald-worker"):
        pod = by_kind(OBJECTS, "Deployment")[name]["spec"]["template"]["spec"]
        assert [c["args"][:2] for c in pod["initContainers"]] == [["db", "wait"]]


def test_each_budget_selects_its_deployments_pods():
    deployments = by_kind(OBJECTS, "Deployment")
    for name, budget in by_kind(OBJECTS, "PodDisruptionBudget").items():
        labels = deployments[name]["spec"]["template"]["metadata"]["labels"]
        assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_the_ingress_fronts_the_api_service_with_tls_and_the_hop_is_trusted():
    ingress = by_kind(OBJECTS, "Ingress")["herald"]["spec"]
    backend = ingress["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "herald-api", "port": {"name": "http"}}
    assert ingress["tls"][0]["hosts"] == [ingress["rules"][0]["host"]]
    assert by_kind(OBJECTS, "ConfigMap")["herald"]["data"]["HERALD_TRUSTED_PROXIES"] == "1"


def test_the_nightly_backup_dumps_in_custom_format_to_its_own_volume():
    cron = by_kind(OBJECTS, "CronJob")["herald-backup"]["spec"]
    pod = cron["jobTemplate"]["spec"]["template"]["spec"]
    script = pod["containers"][0]["args"][0]
    assert "umask 077" in script and "pg_dump --format=custom" in script
    assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] in by_kind(
        OBJECTS, "PersistentVolumeClaim")
    assert cron["concurrencyPolicy"] == "Forbid"


def test_the_workers_serve_metrics_on_a_named_annotated_port_with_the_secret_token():
    pod = by_kind(OBJECTS, "Deployment")["herald-worker"]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert {"name": "HERALD_WORKER_METRICS_PORT", "value": "9100"} in container["env"]
    assert container["ports"] == [{"name": "metrics", "containerPort": 9100, "protocol": "TCP"}]
    assert pod["metadata"]["annotations"] == {"prometheus.io/scrape": "true",
                                              "prometheus.io/port": "9100",
                                              "prometheus.io/path": "/metrics"}
    # The token the worker needs for that port is in the Secret's template, to be filled.
    assert "HERALD_METRICS_TOKEN" in by_kind(OBJECTS, "Secret")["herald"]["stringData"]
