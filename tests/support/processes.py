"""Process trees read from /proc, and polling with a deadline."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state letter), or None once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2:].split()  # the name in parentheses may hold spaces
    return int(fields[1]), fields[0]


def running(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has ended: it only waits to be reaped)."""
    stat = _stat(pid)
    return stat is not None and stat[1] != "Z"


def parent_of(pid: int) -> int | None:
    stat = _stat(pid)
    return stat[0] if stat else None


def children(pid: int) -> set[int]:
    """The running processes whose parent is ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[0] == pid and stat[1] != "Z":
                found.add(int(entry.name))
    return found


def descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children(todo.pop()) - found:
            found.add(child)
            todo.append(child)
    return found


def wait_for(predicate: Callable[[], object], timeout: float, what: str,
             explain: Callable[[], str] = lambda: "") -> None:
    """Poll ``predicate`` until it is true; fail naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}. {explain()}")


def stop_group(process: subprocess.Popen, grace: float = 30) -> None:
    """SIGTERM to the process's whole group (started with ``start_new_session``), SIGKILL
    after ``grace`` seconds: a test's teardown leaves nothing of it running."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
