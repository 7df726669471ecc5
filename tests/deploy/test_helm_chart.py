"""deploy/helm/herald/: lints clean (strict: warnings fail too), renders offline with the Helm
SDK (helm-python-sdk), every object valid under kubernetes-validate strict, and with its
default values the same objects as deploy/kubernetes/ but for Helm's own labels."""

from __future__ import annotations

import copy

import helm_python

from tests.deploy.manifests import CHART, by_kind, plain_objects, rendered_objects, schema_errors

HELM_LABELS = ("app.kubernetes.io/instance", "app.kubernetes.io/version",
               "app.kubernetes.io/managed-by", "helm.sh/chart")

# What the chart generates when left empty and the plain Secret leaves to the operator.
GENERATED = ("HERALD_SECRET_KEY", "HERALD_METRICS_TOKEN")


def test_the_chart_lints_without_errors_or_warnings():
    report = helm_python.lint(CHART, strict=True, kube_version="v1.31.0")
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_every_rendered_object_is_valid_kubernetes():
    objects = rendered_objects()
    assert objects
    assert [e for e in map(schema_errors, objects) if e] == []


def _without_helm_additions(obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    for holder in _label_maps(obj):
        for label in HELM_LABELS:
            holder.pop(label, None)
    template = obj.get("spec", {}).get("template", {}).get("metadata", {})
    annotations = template.get("annotations", {})
    annotations.pop("checksum/config", None)  # restarts Pods on a settings change
    if not annotations:
        template.pop("annotations", None)
    if obj["kind"] == "Job":
        obj["metadata"]["name"] = obj["metadata"]["name"].rsplit("-", 1)[0]
    if obj["kind"] == "Secret":  # the chart generates the keys the manifests leave to you
        obj["metadata"].pop("annotations", None)
        for generated in GENERATED:
            obj["stringData"].pop(generated)
    return obj


def _label_maps(obj: dict):
    yield obj["metadata"].setdefault("labels", {})
    spec = obj.get("spec", {})
    if "jobTemplate" in spec:  # a CronJob's Pods
        yield spec["jobTemplate"]["spec"]["template"]["metadata"]["labels"]
    if "template" in spec:
        yield spec["template"]["metadata"]["labels"]
    if "matchLabels" in spec.get("selector", {}):
        yield spec["selector"]["matchLabels"]
    elif obj["kind"] == "Service":
        yield spec["selector"]


def test_the_default_values_render_the_plain_manifests():
    rendered = {(o["kind"], o["metadata"]["name"]): o
                for o in map(_without_helm_additions, rendered_objects())}
    plain = {(o["kind"], o["metadata"]["name"]): o for o in plain_objects()}
    for generated in GENERATED:
        plain["Secret", "herald"]["stringData"].pop(generated)
    assert rendered.keys() == plain.keys()
    for key, obj in plain.items():
        assert rendered[key] == obj, key


def test_each_revision_migrates_in_a_job_of_its_own():
    assert list(by_kind(rendered_objects(revision=3), "Job")) == ["herald-db-upgrade-3"]


def test_an_existing_secret_is_referred_to_and_none_is_rendered():
    objects = rendered_objects({"secret": {"existingSecret": "my-herald"}})
    assert by_kind(objects, "Secret") == {}
    pod = by_kind(objects, "Deployment")["herald-api"]["spec"]["template"]["spec"]
    assert {"secretRef": {"name": "my-herald"}} in pod["containers"][0]["envFrom"]


def test_values_reach_the_objects():
    objects = rendered_objects({"image": {"repository": "images.example/herald", "tag": "1.2"},
                                "api": {"replicas": 5}})
    api = by_kind(objects, "Deployment")["herald-api"]
    assert api["spec"]["replicas"] == 5
    assert api["spec"]["template"]["spec"]["containers"][0]["image"] == \
        "images.example/herald:1.2"


def _rendered_key(values: dict | None = None, name: str = "HERALD_SECRET_KEY") -> str:
    return by_kind(rendered_objects(values), "Secret")["herald"]["stringData"][name]


def test_the_chart_never_creates_a_secret_with_a_known_key():
    """A default install once wrote the same placeholder key into every cluster; now each
    install generates one, which production accepts, and which the Secret keeps on
    uninstall (the data it encrypted)."""
    from config.settings import load_settings

    first, second = _rendered_key(), _rendered_key()
    assert first != second and len(first) == 64
    assert load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": first,
                          "HERALD_EMAIL_PROVIDER": "smtp://mx.example:25"}).secret_key == first
    secret = by_kind(rendered_objects(), "Secret")["herald"]
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    assert _rendered_key({"secret": {"values": {"HERALD_SECRET_KEY": "mine"}}}) == "mine"


def test_a_service_monitor_scrapes_the_api_with_the_secret_token_when_asked():
    assert by_kind(rendered_objects(), "ServiceMonitor") == {}
    objects = rendered_objects({"metrics": {"serviceMonitor": {"enabled": True}}})
    monitor = by_kind(objects, "ServiceMonitor")["herald-api"]["spec"]
    service = by_kind(objects, "Service")["herald-api"]
    labels = service["metadata"]["labels"]
    assert monitor["selector"]["matchLabels"].items() <= labels.items()
    [endpoint] = monitor["endpoints"]
    assert endpoint["path"] == "/metrics" and endpoint["port"] == "http"
    assert endpoint["authorization"]["credentials"] == {"name": "herald",
                                                        "key": "HERALD_METRICS_TOKEN"}


def test_the_workers_serve_metrics_on_their_port_with_a_generated_token():
    """The workers' /metrics is on by default: the port set, named, annotated for a
    Prometheus that discovers Pods, and the token it needs generated like the key."""
    from config.settings import load_settings

    objects = rendered_objects({"worker": {"metricsPort": 9200}})
    pod = by_kind(objects, "Deployment")["herald-worker"]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert {"name": "HERALD_WORKER_METRICS_PORT", "value": "9200"} in container["env"]
    assert container["ports"] == [{"name": "metrics", "containerPort": 9200, "protocol": "TCP"}]
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == "9200"
    token = _rendered_key(name="HERALD_METRICS_TOKEN")
    assert len(token) == 64 and token != _rendered_key(name="HERALD_METRICS_TOKEN")
    settings = load_settings({"HERALD_METRICS_TOKEN": token, "HERALD_WORKER_METRICS_PORT": "9200"})
    assert settings.worker_metrics_port == 9200
    assert _rendered_key({"secret": {"values": {"HERALD_METRICS_TOKEN": "mine-of-16-chars"}}},
                         "HERALD_METRICS_TOKEN") == "mine-of-16-chars"
