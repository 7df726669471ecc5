"""A long-running process's loaded code kept out of the garbage collector's full walks."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

from engine.long_lived import freeze_loaded_objects
from tests.conftest import TEST_SECRET_KEY


class Node:
    """An object that refers to itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def _tracked(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects())  # the permanent generation is not listed


def test_garbage_is_collected_first_and_what_lives_is_frozen():
    dropped = Node()
    gone = weakref.ref(dropped)
    del dropped
    kept = Node()
    try:
        freeze_loaded_objects()
        assert gone() is None  # collected, not kept for good
        assert gc.get_freeze_count() > 0
        assert not _tracked(kept)
    finally:
        gc.unfreeze()
    assert _tracked(kept)


# `herald worker --burst` as its own process, which says at exit how many objects it froze.
PROBE = ("import atexit, gc, sys\n"
         "atexit.register(lambda: print('frozen', gc.get_freeze_count()))\n"
         "from cli.main import main\n"
         "raise SystemExit(main(['worker', '--burst']))\n")


def test_a_worker_process_freezes_its_loaded_code(settings, tmp_path):
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY}
    proc = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    frozen = int(proc.stdout.split("frozen ")[-1])
    assert frozen > 10_000, proc.stdout  # its modules, plugins and settings
