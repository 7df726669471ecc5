"""deploy/grafana/herald.json: every query names only metrics Herald exports (a renamed
metric would leave a panel silently empty), and the panels do not overlap."""

from __future__ import annotations

import json
import re

from tests.deploy.manifests import ROOT

DASHBOARD = ROOT / "deploy" / "grafana" / "herald.json"
NAME = re.compile(r"\b(herald_[a-z_]+)")
SUFFIXES = ("_total", "_bucket", "_count", "_sum", "_created")


def _exported() -> set[str]:
    """The names Herald's metrics are declared with (counters, histograms and the gauges
    computed per scrape), read from engine/observability/."""
    return {name for path in (ROOT / "engine" / "observability").rglob("*.py")
            for name in re.findall(r'"(herald_[a-z_]+)"', path.read_text())}


def test_every_query_names_a_metric_herald_exports():
    exported = _exported()
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert queries
    unknown = set()
    for query in queries:
        for name in NAME.findall(query):
            base = next((name[: -len(s)] for s in SUFFIXES if name.endswith(s)), name)
            if base not in exported and name not in exported:
                unknown.add(name)
    assert unknown == set()


def test_the_panels_do_not_overlap():
    cells = set()
    for panel in json.loads(DASHBOARD.read_text())["panels"]:
        g = panel["gridPos"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"])
                for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, panel["title"]
        cells |= mine
