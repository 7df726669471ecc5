"""What the cyclic garbage collector takes of a request, with the loaded app frozen as the
servers freeze it (engine/long_lived.py) and without.

``python -m bench.gc_pauses [send|preview] [count]`` builds the app as bench.instructions
does, in one process, makes ``count`` requests (10,000 by default, after 300 of warm-up)
once with the app's objects left to the collector and once frozen right after it is built
(as gunicorn's post_worker_init does), and prints, per generation, how many collections
ran, how long each took and what that comes to per request. A full collection is rare
(about one per ten thousand requests) and long: it is the pause every request of the
process waits out, so it is printed on its own.
"""

from __future__ import annotations

import collections
import gc
import subprocess
import sys
import time

from bench.instructions import logs_to_nowhere, request_calls
from engine.long_lived import freeze_loaded_objects

WARM = 300


class Collections:
    """Thread CPU time and count of the collector's runs, per generation."""

    def __init__(self) -> None:
        self.spent: collections.Counter[int] = collections.Counter()
        self.runs: collections.Counter[int] = collections.Counter()
        self.longest: collections.Counter[int] = collections.Counter()
        self._started = 0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.thread_time_ns()
            return
        took = time.thread_time_ns() - self._started
        generation = info["generation"]
        self.spent[generation] += took
        self.runs[generation] += 1
        self.longest[generation] = max(self.longest[generation], took)


def measure(what: str, count: int, frozen: bool) -> tuple[float, Collections]:
    """µs per request, and the collections made during ``count`` requests."""
    seen = Collections()
    with request_calls(what, WARM + count) as call, logs_to_nowhere():
        if frozen:
            freeze_loaded_objects()
        try:
            for _ in range(WARM):
                call()
            gc.callbacks.append(seen)
            started = time.thread_time_ns()
            for _ in range(count):
                call()
            per_request = (time.thread_time_ns() - started) / count / 1000
        finally:
            if seen in gc.callbacks:
                gc.callbacks.remove(seen)
            gc.unfreeze()
    return per_request, seen


def report(what: str, count: int, frozen: bool) -> None:
    per_request, seen = measure(what, count, frozen)
    print(f"{what}, {'frozen' if frozen else 'not frozen'}: {count} requests, "
          f"{per_request:.0f} µs of CPU each")
    for generation in (0, 1, 2):
        runs = seen.runs[generation]
        if not runs:
            print(f"  generation {generation}: no collection")
            continue
        print(f"  generation {generation}: {runs} run{'' if runs == 1 else 's'}, the longest "
              f"{seen.longest[generation] / 1000:,.0f} µs, "
              f"{seen.spent[generation] / count / 1000:.1f} µs a request")


def main(argv: list[str]) -> int:
    what = argv[0] if argv else "send"
    count = argv[1] if len(argv) > 1 else "10000"
    if len(argv) > 2:  # one process a measure: each builds its app afresh
        report(what, int(count), argv[2] == "frozen")
        return 0
    for mode in ("not-frozen", "frozen"):
        subprocess.run([sys.executable, "-m", "bench.gc_pauses", what, count, mode],
                       check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
