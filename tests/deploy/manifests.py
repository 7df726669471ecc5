"""Shared by the deployment tests: deploy/kubernetes/'s objects and the chart's rendering,
and the offline schema check both pass (kubernetes-validate, strict: unknown fields fail)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES = ROOT / "deploy" / "kubernetes"
CHART = ROOT / "deploy" / "helm" / "herald"


def plain_objects() -> list[dict]:
    return [doc for path in sorted(KUBERNETES.glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc]


def rendered_objects(values: dict | None = None, revision: int = 1) -> list[dict]:
    import helm_python

    chart = helm_python.Chart.load(CHART)
    manifests = chart.render(values, name="herald", namespace="default", revision=revision,
                             is_install=revision == 1, is_upgrade=revision > 1)
    return [doc for name, text in sorted(manifests.items()) if name.endswith(".yaml")
            for doc in yaml.safe_load_all(text) if doc]


def schema_errors(obj: dict) -> str | None:
    """None when the object is valid for the newest Kubernetes the package knows, strictly."""
    import kubernetes_validate

    try:
        kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
    except kubernetes_validate.ValidationError as err:
        return f"{obj['kind']}/{obj['metadata']['name']}: {err.message} at {list(err.path)}"
    return None


def by_kind(objects: list[dict], kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}
