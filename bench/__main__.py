"""`make bench`: every figure with its floor, a table on stdout and bench/results.json;
`make bench-quick` (``--quick``): the edit-measure loop's figures, bench/results-quick.json."""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

# name -> (kind, target): "ratio" targets compare value/floor, "max"/"min" the value itself.
# The send's floor commits a row and enqueues (what its promises need); the preview's
# makes the one Redis round trip its shared limits need.
TARGETS = {
    "send": ("ratio", 0.85),
    "send_idempotent": ("ratio", 0.85),
    "preview": ("ratio", 0.7),
    "email_delivery": ("ratio", 0.85),
    "webhook_delivery": ("ratio", 0.8),
    "callback_delivery": ("ratio", 0.5),
    "callback_delivery_cpu": ("ratio", 0.5),  # the same runs, by the worker's CPU time
    "marketing_fanout": ("ratio", 1.0),
    "render_warm": ("max", 2.0),
    "render_cold": ("max", 50.0),
    # The same targets with a layout, two partials and CSS inlining on (bench.render_features).
    "render_warm_layout": ("max", 2.0),
    "render_warm_layout_inline": ("max", 2.0),
    "render_cold_layout_inline": ("max", 50.0),
    "hostile_preview_cpu_ms": ("max", 1000.0),
    "transactional_p99_during_fanout_ms": ("max", 2000.0),
    "web_preview": ("ratio", 0.8),
    "web_preview_edit": ("ratio", 1 / 3),
    "reports_page_p50": ("max", 300.0),
    "reports_page_filtered_p50": ("max", 300.0),
    "reports_export": ("min", 50000.0),
    "list_rows_per_s": ("min", 2000.0),
    "transactional_p99_during_list_ms": ("max", 2000.0),
    "transactional_p99_during_purge_ms": ("max", 2000.0),
    # Providers that take their time (bench.slow_delivery): one worker at its defaults
    # against a bare client with as many threads into the same servers.
    "email_delivery_200ms": ("ratio", 0.8),
    "webhook_delivery_300ms": ("ratio", 0.8),
    "tarpit_other_workspace_p99_ms": ("max", 1000.0),
    "rss_worker_32_in_flight": ("max", 120.0),
    # Eight hostile editor previews at once: the server's other requests still answer.
    "healthz_p99_during_hostile_previews_ms": ("max", 100.0),
    "healthz_p99_during_unlimited_hostile_previews_ms": ("max", 100.0),
    "healthz_p99_during_hanging_callback_tests_ms": ("max", 100.0),
    "healthz_p99_during_list_uploads_ms": ("max", 100.0),
}
MODULES = ("bench.render", "bench.render_features", "bench.hostile", "bench.api",
           "bench.delivery", "bench.callbacks", "bench.fairness", "bench.web", "bench.reports",
           "bench.lists", "bench.purge", "bench.slow_delivery", "bench.attack")
# `make bench-quick`: the send, the preview, delivery and the editor's preview, fewer rounds.
QUICK_MODULES = ("bench.api", "bench.delivery", "bench.web")


def verdict(row: dict) -> str:
    kind, target = TARGETS.get(row["name"], (None, None))
    if kind is None:
        return ""
    if kind == "ratio":
        ok = row["ratio"] is not None and row["ratio"] >= target
        return f"{'ok' if ok else 'MISS'} (>= {target:.3g})"
    ok = row["value"] <= target if kind == "max" else row["value"] >= target
    return f"{'ok' if ok else 'MISS'} ({'<=' if kind == 'max' else '>='} {target:g})"


def main(argv: list[str]) -> int:
    if "--quick" in argv:
        argv = [name for name in argv if name != "--quick"]
        os.environ["HERALD_BENCH_QUICK"] = "1"  # before the modules read their sizes
    wanted = argv or list(QUICK_MODULES if os.environ.get("HERALD_BENCH_QUICK") == "1"
                          else MODULES)
    figures: list[dict] = []
    started = time.monotonic()
    for name in wanted:
        module = importlib.import_module(name if name.startswith("bench.") else f"bench.{name}")
        print(f"-- {module.__name__}", flush=True)
        began = time.monotonic()
        figures.extend(module.run())
        print(f"-- {module.__name__}: {time.monotonic() - began:.0f} s", flush=True)
    width = max(len(f["name"]) for f in figures)
    print(f"\n{'figure':<{width}}  {'value':>12}  {'floor':>12}  {'ratio':>7}  unit / target")
    for row in figures:
        floor = "" if row["floor"] is None else f"{row['floor']:.3f}"
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.3f}"
        print(f"{row['name']:<{width}}  {row['value']:>12.3f}  {floor:>12}  {ratio:>7}  "
              f"{row['unit']}  {verdict(row)}")
    out = {
        "figures": figures,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "seconds": round(time.monotonic() - started, 1),
    }
    name = "results-quick.json" if os.environ.get("HERALD_BENCH_QUICK") == "1" else "results.json"
    path = Path(__file__).with_name(name)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"\n{out['seconds']:.0f} s in all")
    print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
