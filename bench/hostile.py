"""hostile_preview_cpu_ms: the CPU one preview's rendering costs at worst, over a corpus of
hostile templates (issue 30, finding 3). Each entry is rendered as a preview renders an
email's three parts (subject, body, htmlHead), inside one request budget
(HERALD_RENDER_BUDGET_SECONDS at its default); the figure is the worst entry's process CPU
time. Target: under 1,000 ms. No floor: the bound is absolute.
`python -m bench.hostile` prints the table; `run()` returns the rows.
"""

from __future__ import annotations

import contextlib
import time

from bench.common import figure
from config.settings import Settings
from engine.rendering import RenderError, render_budget, render_part

TAGS = {f"k{i}": "v" * 100 for i in range(100)}
CORPUS = {
    "nested_each": "{{#each @root}}" * 6 + "{{/each}}" * 6,
    "each_uppercase": "{{#each this}}{{#each @root}}{{uppercase this}}{{/each}}{{/each}}",
    "big_output": "{{#each @root}}{{#each @root}}{{../this}}{{this}}{{/each}}{{/each}}",
    "many_helpers": "{{uppercase k1}}{{lowercase k2}}" * 20_000,
}


def _preview_cpu(text: str, budget: float) -> float:
    started = time.process_time()
    with render_budget(budget):
        for part in ("subject", "body", "htmlHead"):
            # Over the budget: rendering_failed, which is the point.
            with contextlib.suppress(RenderError):
                render_part(None, part, text, TAGS,
                            language="text" if part == "subject" else "html")
    return (time.process_time() - started) * 1000


def run() -> list[dict]:
    budget = Settings().render_budget_seconds
    worst = max(_preview_cpu(text, budget) for text in CORPUS.values())
    return [figure("hostile_preview_cpu_ms", worst, "ms CPU, worst hostile preview", None)]


if __name__ == "__main__":
    for row in run():
        print(row)
