"""A worker process or scheduler never outlives the process that started it.

Linux tells a child when its parent dies (``prctl(PR_SET_PDEATHSIG)``); elsewhere a thread
watches for the child being handed to another parent. Either way the child gets SIGTERM,
the signal of a warm shutdown: it finishes the delivery in hand, releases what it holds in
Redis (the scheduler's lock) and exits.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def bind_to_parent(parent_pid: int, signum: int = signal.SIGTERM) -> None:
    """Have ``signum`` sent to this process when ``parent_pid`` (its parent) dies."""
    if not _ask_the_kernel(signum):
        threading.Thread(target=_watch, args=(parent_pid, signum), daemon=True,
                         name="herald-lifeline").start()
    if os.getppid() != parent_pid:  # the parent died before the kernel was asked
        os.kill(os.getpid(), signum)


def _ask_the_kernel(signum: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library Python itself runs on
        return libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent_pid: int, signum: int) -> None:
    stop = threading.Event()
    while not stop.wait(1.0):
        if os.getppid() != parent_pid:
            os.kill(os.getpid(), signum)
            return
