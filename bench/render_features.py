"""Rendering with what teams maintain templates with: a layout and partials, and CSS
inlining of the email document (docs/rendering.md).

- render_warm_layout: the 50 KB template of bench.render, its head and tail moved into a
  layout partial (`{{#> layout}}...{{/layout}}`) and its rows calling two partials;
  floor: the same output built by hand (bench.render's floor).
- render_warm_layout_inline: the same, then the email document (`htmlHead` with a
  `<style>` block of a few rules and a media query) CSS-inlined as a send does it; floor:
  the same render and document without inlining, so the ratio is inlining's share.
- render_cold_layout_inline: a fresh interpreter that imports the renderer and the
  inliner, reads the stored programs of the template and its partials and renders and
  inlines the 50 KB document; floor: `import engine.rendering` alone (bench.render's).
`python -m bench.render_features` prints the table; `run()` returns the rows.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

from bench.common import figure
from bench.render import TAGS, _best_ms, _byte_compile, _floor_render, _wall_ms, make_template
from engine.formats.email_body import html_document, inline_css
from engine.rendering import PartialSet, PartialSource, compile_parts, render_part

STYLE = ("<style>td.name { font-weight: bold; color: #222 } td.tier { color: #c00 }"
         " p { margin: 0 0 12px 0 } table { border-collapse: collapse }"
         " @media (max-width: 600px) { td { display: block } }</style>")
LAYOUT_HEAD = "<html>\n<head><title>Order {{orderId}}</title></head>\n<body>\n<table>\n"
LAYOUT_TAIL = "</table>\n</body>\n</html>\n"
# Each leaves text after it on its line: a partial alone on its line is standalone, and
# handlebars.js drops that line's break (the partial's output would then differ).
ROW_NAME = "<td class=\"name\">{{firstName}} {{lastName}}"
THANKS = ("<p style=\"margin:0 0 12px 0;font-family:Arial,sans-serif;font-size:14px;\">"
          "Thank you for your order. We will let you know when it ships.")


def layout_template(size: int) -> tuple[str, dict[str, str], list[tuple[str, str]]]:
    """(template, partials, floor plan): bench.render's template, the same output."""
    text, plan = make_template(size)
    assert text.startswith(LAYOUT_HEAD) and text.endswith(LAYOUT_TAIL)
    inner = text[len(LAYOUT_HEAD):-len(LAYOUT_TAIL)]
    inner = inner.replace(ROW_NAME, "{{> name}}").replace(THANKS, "{{> thanks}}")
    partials = {"layout": LAYOUT_HEAD + "{{> @partial-block}}" + LAYOUT_TAIL,
                "name": ROW_NAME, "thanks": THANKS}
    return "{{#> layout}}" + inner + "{{/layout}}", partials, plan


def _stored_partials(partials: dict[str, str]) -> PartialSet:
    return PartialSet({name: PartialSource(f"bench-{name}", body, compile_parts({"body": body}))
                       for name, body in partials.items()})


def warm_figures() -> list[dict]:
    text, partials, plan = layout_template(50 * 1024)
    stored = compile_parts({"body": text})
    found = _stored_partials(partials)

    def render() -> str:
        return render_part(stored, "body", text, TAGS, cache_key="bench-layout",
                           partials=found)

    assert render() == _floor_render(plan, TAGS), "the floor must build the same output"
    value = _best_ms(render, 7, 200)
    floor = _best_ms(lambda: _floor_render(plan, TAGS), 7, 200)
    rows = [figure("render_warm_layout", value, "ms", floor, higher_is_better=False)]

    def plain() -> str:
        return html_document(render(), STYLE)

    def inlined() -> str:
        return inline_css(plain())

    assert 'style="font-weight: bold;color: #222;"' in inlined()
    value = _best_ms(inlined, 7, 50)
    floor = _best_ms(plain, 7, 50)
    rows.append(figure("render_warm_layout_inline", value, "ms", floor,
                       higher_is_better=False))
    return rows


_CHILD = """
import json, sys, time
start = time.perf_counter()
from engine.formats.email_body import html_document, inline_css
from engine.rendering import PartialSet, PartialSource, render_part
with open(sys.argv[1], encoding="utf-8") as fh:
    row = json.load(fh)
found = PartialSet({n: PartialSource(p["id"], p["body"], p["compiled"])
                    for n, p in row["partials"].items()})
body = render_part(row["compiled"], "body", row["body"], row["tags"], cache_key=row["id"],
                   partials=found)
out = inline_css(html_document(body, row["head"]))
print(json.dumps({"inner_ms": (time.perf_counter() - start) * 1000, "chars": len(out)}))
"""


def cold_figures(runs: int = 15) -> list[dict]:
    _byte_compile()
    text, partials, _ = layout_template(50 * 1024)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "version.json"
        path.write_text(json.dumps({
            "id": "v-1", "body": text, "tags": TAGS, "head": STYLE,
            "compiled": compile_parts({"body": text}),
            "partials": {name: {"id": f"p-{name}", "body": body,
                                "compiled": compile_parts({"body": body})}
                         for name, body in partials.items()}}))
        values, floors, inner = [], [], []
        for _ in range(runs):
            ms, out = _wall_ms([sys.executable, "-c", _CHILD, str(path)])
            values.append(ms)
            inner.append(json.loads(out)["inner_ms"])
            ms, _ = _wall_ms([sys.executable, "-c", "import engine.rendering"])
            floors.append(ms)
    return [figure("render_cold_layout_inline", statistics.median(values), "ms",
                   statistics.median(floors), higher_is_better=False),
            figure("render_cold_layout_inline_in_process", statistics.median(inner), "ms",
                   None)]


def run() -> list[dict]:
    return [*warm_figures(), *cold_figures()]


def main() -> int:
    for row in run():
        floor = "" if row["floor"] is None else f"{row['floor']:.3f}"
        print(f"{row['name']:<38} {row['value']:>10.3f} {floor:>10} {row['unit']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
