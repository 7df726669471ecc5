"""`herald worker --processes N`: the parent keeps N worker processes running.

A worker process that ends (killed by any signal, or exited with any status) is replaced,
with one log line saying which one and why. One that keeps dying soon after it starts is
replaced after a growing pause (1, 2, 4 ... up to ``MAX_PAUSE`` seconds), so a crash loop
does not spin. A worker process that exits with status 2 met a configuration error: the
parent stops the others and exits 2. SIGTERM or SIGINT is passed on to every worker process
(each finishes the delivery in hand) and the parent exits 0 once they have. The worker
processes die with the parent (engine/worker/lifeline.py); a process supervisor (systemd,
Kubernetes) still watches the parent.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("herald.supervisor")
CONFIG_ERROR = 2
STEADY_SECONDS = 30.0  # a process that lived this long died of something new: no pause
MAX_PAUSE = 60.0
POLL_SECONDS = 0.2


@dataclass
class _Slot:
    number: int
    process: subprocess.Popen | None = None
    started: float = 0.0
    quick_deaths: int = 0  # in a row, each within STEADY_SECONDS of its start
    restart_at: float = 0.0


def restart_pause(quick_deaths: int) -> float:
    """Seconds before a new process replaces one that died, after ``quick_deaths`` quick deaths
    in a row: none for the first, then 1, 2, 4 ... up to MAX_PAUSE."""
    return 0.0 if quick_deaths <= 1 else min(MAX_PAUSE, 2.0 ** (quick_deaths - 2))


def worker_command(burst: bool, fork: bool, replacement: bool,
                   concurrency: int | None = None) -> list[str]:
    """A worker process of this parent; a replacement re-enqueues at once what the process
    it replaces had taken from the queue."""
    command = [sys.executable, "-m", "engine.worker.worker", "--parent", str(os.getpid())]
    if concurrency is not None:
        command += ["--concurrency", str(concurrency)]
    return command + ["--burst"] * burst + ["--fork"] * fork + ["--replacement"] * replacement


def describe_end(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


class Supervisor:
    """Starts ``processes`` worker processes and keeps them running until a signal."""

    def __init__(self, processes: int, burst: bool = False, fork: bool = False,
                 command: Callable[[bool, bool, bool], list[str]] = worker_command,
                 concurrency: int | None = None) -> None:
        self._slots = [_Slot(number) for number in range(1, processes + 1)]
        self._burst, self._fork = burst, fork
        self._command = (functools.partial(command, concurrency=concurrency)
                         if concurrency is not None else command)
        self._stopping = False
        self._signalled: set[int] = set()  # pids the stop signal was passed to

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        for slot in self._slots:
            self._start(slot, replacement=False)
        status = None
        while status is None:
            time.sleep(POLL_SECONDS)
            status = self._look()
        return status

    def _look(self) -> int | None:
        """One look at every process: the exit status once the parent is done, else None."""
        if self._stopping:
            # A process started while the signal was being passed on has not had it yet.
            self._stop_all(signal.SIGTERM, only_new=True)
            self._wait_all()
            return 0
        if self._burst:
            codes = [slot.process.poll() for slot in self._slots if slot.process is not None]
            if any(code is None for code in codes):
                return None
            return max((code if code >= 0 else 1 for code in codes), default=0)
        for slot in self._slots:
            if self._replace_if_ended(slot) == CONFIG_ERROR:
                self._stop_all(signal.SIGTERM)
                self._wait_all()
                return CONFIG_ERROR
        return None

    def _replace_if_ended(self, slot: _Slot) -> int | None:
        now = time.monotonic()
        if slot.process is None:  # waiting out its pause
            if now >= slot.restart_at:
                self._start(slot, replacement=True)
            return None
        code = slot.process.poll()
        if code is None or self._stopping:
            return None
        lived = now - slot.started
        about = (f"worker process {slot.number} (pid {slot.process.pid}) {describe_end(code)} "
                 f"after {lived:.1f} s")
        if code == CONFIG_ERROR:
            log.error("%s: a configuration error; stopping the others", about)
            return code
        slot.quick_deaths = slot.quick_deaths + 1 if lived < STEADY_SECONDS else 1
        pause = restart_pause(slot.quick_deaths)
        slot.process, slot.restart_at = None, now + pause
        if pause:
            log.warning("%s; starting a new one in %.0f s (it ended %d times in a row, each "
                        "within %.0f s of starting)", about, pause, slot.quick_deaths,
                        STEADY_SECONDS)
        else:
            log.warning("%s; starting a new one", about)
            self._start(slot, replacement=True)
        return code

    def _start(self, slot: _Slot, replacement: bool) -> None:
        if self._stopping:
            return
        command = self._command(self._burst, self._fork, replacement)
        slot.process, slot.started = subprocess.Popen(command), time.monotonic()

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self._stopping = True
        self._stop_all(signum)  # a second one too: RQ's cold shutdown, as without a parent

    def _stop_all(self, signum: int, only_new: bool = False) -> None:
        for slot in self._slots:
            process = slot.process
            if process is None or process.poll() is not None:
                continue
            if not (only_new and process.pid in self._signalled):
                self._signalled.add(process.pid)
                process.send_signal(signum)

    def _wait_all(self) -> None:
        for slot in self._slots:
            if slot.process is not None:
                slot.process.wait()
