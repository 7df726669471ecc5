"""A long-running process's loaded code kept out of the cyclic garbage collector's walks.

Once an API worker has loaded its app (or a delivery worker its plugins), it holds about
90,000 objects for good: modules, classes, functions, settings, schemas, compiled
templates. Python's full collection walks every tracked object, and one of these took
54-70 ms on a 2-core machine, about once every ten thousand requests, holding the
interpreter lock throughout: every request or delivery of that process waited for it.
Frozen (``gc.freeze``), they are never walked again; a full collection walks only what came
after, and the young collections, which free a request's own cycles, are unchanged.
docs/performance.md, "The garbage collector", has the figures.
"""

from __future__ import annotations

import gc


def freeze_loaded_objects() -> None:
    """Collect what loading left as garbage (so none of it is kept for good), then move
    every object still alive to the collector's permanent generation."""
    gc.collect()
    gc.freeze()
