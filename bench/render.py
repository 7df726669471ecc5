"""Rendering figures: compile of 1/10/100 KB, warm render of 50 KB, cold first render.

Floors, measured in the same run:
- compile: one regex split of the same text into text and mustaches (the least any
  template scanner must do);
- render_warm: the same output built by hand with a list of pieces, dict lookups,
  `html.escape` and one `"".join`;
- render_cold: a fresh interpreter that only imports engine.rendering
  (`python -c "import engine.rendering"`); the figure is a fresh interpreter that imports
  it, reads the stored code of a published version from disk and renders 50 KB (median
  wall time of the whole subprocess, interpreter start included; modules byte-compiled
  first, as an installation has them).
`python -m bench.render` prints the table; `run()` returns the rows.
"""

from __future__ import annotations

import compileall
import html
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import ROOT, figure
from engine.rendering import compile_parts, render_part

TAGS = {"firstName": "Ada", "lastName": "Lovelace & Co", "orderId": "A-1029",
        "vip": "yes", "tier": "gold", "city": "<London>", "total": "1,024.00",
        "orderDate": "2026-03-05T14:07:09Z", "empty": ""}

_ROW = (
    "<tr>\n"
    "  <td class=\"name\">{{firstName}} {{lastName}}</td>\n"
    "  {{#if vip}}\n"
    "  <td class=\"tier\">VIP {{uppercase tier}}</td>\n"
    "  {{else}}\n"
    "  <td class=\"tier\">-</td>\n"
    "  {{/if}}\n"
    "  <td>{{orderId}}</td><td>{{city}}</td><td>{{total}}</td>\n"
    "</tr>\n"
    "<p style=\"margin:0 0 12px 0;font-family:Arial,sans-serif;font-size:14px;\">"
    "Thank you for your order. We will let you know when it ships.</p>\n"
)
_ROW_OUT = [("s", "<tr>\n  <td class=\"name\">"), ("v", "firstname"), ("s", " "),
            ("v", "lastname"), ("s", "</td>\n  <td class=\"tier\">VIP "), ("u", "tier"),
            ("s", "</td>\n  <td>"), ("v", "orderid"), ("s", "</td><td>"), ("v", "city"),
            ("s", "</td><td>"), ("v", "total"),
            ("s", "</td>\n</tr>\n<p style=\"margin:0 0 12px 0;font-family:Arial,sans-serif;"
                  "font-size:14px;\">Thank you for your order. We will let you know when it "
                  "ships.</p>\n")]
_HEAD = "<html>\n<head><title>Order {{orderId}}</title></head>\n<body>\n<table>\n"
_HEAD_OUT = [("s", "<html>\n<head><title>Order "), ("v", "orderid"),
             ("s", "</title></head>\n<body>\n<table>\n")]
_TAIL = "</table>\n</body>\n</html>\n"


def make_template(size: int) -> tuple[str, list[tuple[str, str]]]:
    """An HTML email of about `size` characters and its output plan for the floor."""
    rows = max(1, (size - len(_HEAD) - len(_TAIL)) // len(_ROW))
    plan = _HEAD_OUT + _ROW_OUT * rows + [("s", _TAIL)]
    return _HEAD + _ROW * rows + _TAIL, plan


def make_dense(size: int) -> str:
    """Mustaches back to back: the hardest case for a compiler."""
    unit = "{{firstName}}{{#if vip}}{{uppercase tier}}{{/if}}"
    return unit * max(1, size // len(unit))


def _floor_render(plan: list[tuple[str, str]], tags: dict[str, str]) -> str:
    lowered = {k.lower(): v for k, v in tags.items()}
    parts = []
    for kind, value in plan:
        if kind == "s":
            parts.append(value)
        elif kind == "v":
            parts.append(html.escape(lowered[value]))
        else:
            parts.append(html.escape(lowered[value].upper()))
    return "".join(parts)


def _best_ms(fn: Callable[[], object], repeat: int, number: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1000


_MUSTACHE = re.compile(r"(\{\{.*?\}\})", re.S)


def compile_figures() -> list[dict]:
    rows = []
    for kb in (1, 10, 100):
        text, _ = make_template(kb * 1024)
        number = 20 if kb < 100 else 3
        value = _best_ms(lambda t=text: compile_parts({"body": t}), 5, number)
        floor = _best_ms(lambda t=text: _MUSTACHE.split(t), 5, number)
        rows.append(figure(f"compile_{kb}kb", value, "ms", floor, higher_is_better=False))
    dense = make_dense(100 * 1024)
    value = _best_ms(lambda: compile_parts({"body": dense}), 3, 3)
    floor = _best_ms(lambda: _MUSTACHE.split(dense), 3, 3)
    rows.append(figure("compile_100kb_dense", value, "ms", floor, higher_is_better=False))
    return rows


def warm_figure() -> dict:
    text, plan = make_template(50 * 1024)
    stored = compile_parts({"body": text})
    ours = render_part(stored, "body", text, TAGS, cache_key="bench-warm")
    assert ours == _floor_render(plan, TAGS), "the floor must build the same output"
    value = _best_ms(lambda: render_part(stored, "body", text, TAGS, cache_key="bench-warm"),
                     7, 200)
    floor = _best_ms(lambda: _floor_render(plan, TAGS), 7, 200)
    return figure("render_warm", value, "ms", floor, higher_is_better=False)


_CHILD = """
import json, sys, time
start = time.perf_counter()
from engine.rendering import render_part
with open(sys.argv[1], encoding="utf-8") as fh:
    row = json.load(fh)
out = render_part(row["compiled"], "body", row["body"], row["tags"], cache_key=row["id"])
print(json.dumps({"inner_ms": (time.perf_counter() - start) * 1000, "chars": len(out)}))
"""


def _wall_ms(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True)
    return (time.perf_counter() - start) * 1000, proc.stdout


def _byte_compile() -> None:
    # An installed deployment has byte-compiled modules (a wheel install compiles them, the
    # image runs compileall); this environment may set PYTHONDONTWRITEBYTECODE, which would
    # make every cold start compile the sources. The whole engine package: the cold
    # children import the renderer and, with a layout and inlining, engine.formats.
    compileall.compile_dir(ROOT / "engine", quiet=1)


def cold_figures(runs: int = 15) -> list[dict]:
    _byte_compile()
    text, _ = make_template(50 * 1024)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "version.json"
        path.write_text(json.dumps({"id": "v-1", "body": text, "tags": TAGS,
                                    "compiled": compile_parts({"body": text})}))
        values, floors, inner = [], [], []
        for _ in range(runs):
            ms, out = _wall_ms([sys.executable, "-c", _CHILD, str(path)])
            values.append(ms)
            inner.append(json.loads(out)["inner_ms"])
            ms, _ = _wall_ms([sys.executable, "-c", "import engine.rendering"])
            floors.append(ms)
    value, floor = statistics.median(values), statistics.median(floors)
    return [figure("render_cold", value, "ms", floor, higher_is_better=False),
            figure("render_cold_in_process", statistics.median(inner), "ms", None)]


def run() -> list[dict]:
    return [*compile_figures(), warm_figure(), *cold_figures()]


def main() -> int:
    rows = run()
    print(f"{'figure':<24} {'value':>10} {'floor':>10} {'ratio':>7} unit")
    for row in rows:
        floor = "" if row["floor"] is None else f"{row['floor']:.3f}"
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.3f}"
        print(f"{row['name']:<24} {row['value']:>10.3f} {floor:>10} {ratio:>7} {row['unit']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
