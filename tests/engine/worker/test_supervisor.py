"""The parent of `herald worker --processes N` replaces a process that ends, pausing longer
each time one keeps dying, and stops on a configuration error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from engine.worker.supervisor import describe_end, restart_pause
from tests.support.processes import wait_for

# A supervisor whose one "worker process" exits at once with the status given.
SUPERVISOR = textwrap.dedent("""
    import logging, sys
    from engine.worker.supervisor import Supervisor
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    child = [sys.executable, "-c", f"raise SystemExit({sys.argv[1]})"]
    raise SystemExit(Supervisor(1, command=lambda *_: child).run())
""")


def _supervise(status: int, log) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SUPERVISOR, str(status)], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def test_the_pause_before_a_replacement_grows_while_processes_keep_dying():
    assert [restart_pause(n) for n in range(1, 6)] == [0.0, 1.0, 2.0, 4.0, 8.0]
    assert restart_pause(30) == 60.0


def test_an_end_is_told_by_its_signal_or_its_status():
    assert describe_end(-signal.SIGKILL) == "was killed by SIGKILL"
    assert describe_end(-signal.SIGSEGV) == "was killed by SIGSEGV"
    assert describe_end(1) == "exited with status 1"


@pytest.mark.slow
def test_a_process_that_keeps_dying_is_replaced_after_growing_pauses(tmp_path):
    path = tmp_path / "supervisor.log"
    with path.open("wb") as log:
        parent = _supervise(3, log)
    try:
        wait_for(lambda: "starting a new one in 2 s" in path.read_text(), 30,
                 "the third replacement", lambda: path.read_text())
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=30) == 0
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
    lines = [line for line in path.read_text().splitlines() if "worker process 1" in line]
    assert "exited with status 3" in lines[0] and lines[0].endswith("; starting a new one")
    assert lines[1].endswith("starting a new one in 1 s (it ended 2 times in a row, each "
                             "within 30 s of starting)")
    assert "starting a new one in 2 s (it ended 3 times in a row" in lines[2]


def test_a_configuration_error_stops_the_parent_with_status_2(tmp_path):
    path = tmp_path / "supervisor.log"
    with path.open("wb") as log:
        parent = _supervise(2, log)
    try:
        assert parent.wait(timeout=30) == 2
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
    (line,) = path.read_text().splitlines()
    assert "exited with status 2" in line and "a configuration error" in line
