"""Where a request's CPU goes on the machine itself: the thread's CPU time per request of the
API's send or preview, or of a floor, and of each named part of the send or preview.

``python -m bench.native_parts [send|preview|durable_floor|preview_floor|json_floor] [count]``
makes ``count`` requests (2,000 by default, after 200 of warm-up) in one process through
the WSGI app, set up as bench.instructions sets them up, in ten rounds, and prints the
least and the median round of the whole request and of each part.

Instructions (bench/instructions.py) are steady, but they are not time: a request's code
runs cold, each part after others that pushed it out of the processor's caches, and a part
that takes 17 µs in a loop of its own takes three times that inside a request. What a cut
saves on the machine is read here, each part timed where it runs. The clock is a system
call (about 1 µs here), read twice a part, so a part of a few microseconds reads high;
the total has no probe inside it but the parts'.
"""

from __future__ import annotations

import collections
import importlib
import statistics
import sys
import time
from collections.abc import Callable

from bench.instructions import FLOORS, logs_to_nowhere, request_calls

# A part: its label and where it is looked up when called ("module:attribute.path"); a
# label's indent shows what it is part of.
PARTS: dict[str, list[tuple[str, str]]] = {
    "send": [
        ("the body, read and parsed", "api.notifications:_body_or_error"),
        ("the send in the engine", "engine.sending:send"),
        ("  admission", "engine.sending.accepting:admit"),
        ("    its Redis round trip", "engine.sending.limits:check"),
        ("  render and payload", "engine.sending.accepting:rendered_payload"),
        ("  the row, made", "engine.sending.accepting:_row"),
        ("  the row, inserted and committed", "engine.database.notification_store:insert_rows"),
        ("  the job, enqueued", "engine.sending.accepting:enqueue_notifications"),
        ("  the accepted log line", "engine.sending.accepting:log.info"),
        ("the answer", "api.notifications:answer_text"),
    ],
    "preview": [
        ("the body, read and parsed", "api.notifications:_body_or_error"),
        ("the preview in the engine", "engine.sending:preview"),
        ("  admission", "engine.sending.preview:admit"),
        ("    resolution", "engine.sending.admission:_resolve"),
        ("    its Redis round trip", "engine.sending.limits:check"),
        ("  the build", "engine.sending.preview:build_preview"),
        ("    render", "engine.sending.preview:render_parts"),
        ("    unsuppressed recipients", "engine.sending.preview:_unsuppressed"),
        ("    variables", "engine.sending.preview:_variables"),
        ("    final bodies", "engine.sending.preview:_final_bodies"),
        ("the answer's JSON", "api.notifications:preview_text"),
    ],
}
ROUNDS = 10
WARM = 200


class Timed:
    """Thread CPU time spent in each wrapped callable, this round."""

    def __init__(self) -> None:
        self.spent: collections.Counter[str] = collections.Counter()

    def wrap(self, label: str, where: str) -> None:
        """Replace the callable at ``where`` with one that times each call."""
        module, _, attribute = where.partition(":")
        owner: object = importlib.import_module(module)
        *path, name = attribute.split(".")
        for step in path:
            owner = getattr(owner, step)
        original: Callable = getattr(owner, name)
        spent, clock = self.spent, time.thread_time_ns

        def timed(*args, **kwargs):
            started = clock()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] += clock() - started

        setattr(owner, name, timed)


def measure(what: str, count: int) -> dict[str, list[float]]:
    """µs per request of the whole request (``"request"``) and of each part, one value a
    round."""
    per_round = max(1, count // ROUNDS)
    parts = PARTS.get(what, [])  # a floor has none: only its whole request
    timed = Timed()
    rounds: dict[str, list[float]] = collections.defaultdict(list)
    with request_calls(what, WARM + ROUNDS * per_round) as call, logs_to_nowhere():
        for label, where in parts:
            timed.wrap(label, where)
        for _ in range(WARM):
            call()
        for _ in range(ROUNDS):
            timed.spent.clear()
            started = time.thread_time_ns()
            for _ in range(per_round):
                call()
            rounds["request"].append((time.thread_time_ns() - started) / per_round / 1000)
            for label, _ in parts:
                rounds[label].append(timed.spent[label] / per_round / 1000)
    return rounds


def main(argv: list[str]) -> int:
    what = argv[0] if argv else "send"
    if what not in PARTS and what not in FLOORS:
        print(f"one of {', '.join([*PARTS, *FLOORS])}", file=sys.stderr)
        return 2
    count = int(argv[1]) if len(argv) > 1 else 2000
    rounds = measure(what, count)
    print(f"{what}: µs of CPU per request in one thread, {ROUNDS} rounds "
          f"of {max(1, count // ROUNDS)}")
    print(f"{'':<36}{'least':>8}{'median':>8}")
    for label, values in rounds.items():
        print(f"{label:<36}{min(values):>8.0f}{statistics.median(values):>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
