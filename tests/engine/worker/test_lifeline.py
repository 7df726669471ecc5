"""A process bound to its parent gets SIGTERM when the parent dies, even by SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.support.processes import running, wait_for

CHILD = textwrap.dedent("""
    import signal, sys
    from engine.worker import lifeline
    if sys.argv[2] == "watch":  # as where the kernel cannot be asked
        lifeline._ask_the_kernel = lambda signum: False
    lifeline.bind_to_parent(int(sys.argv[1]))
    print("bound", flush=True)
    signal.pause()  # until a signal: SIGTERM ends it
""")

PARENT = textwrap.dedent("""
    import os, signal, subprocess, sys
    child = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(os.getpid()), sys.argv[2]],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "bound\\n"
    print(child.pid, flush=True)
    signal.pause()
""")


@pytest.mark.parametrize("how", ["kernel", "watch"])
def test_a_child_ends_when_its_parent_is_killed(how):
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD, how], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        child = int(parent.stdout.readline())
        assert running(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        wait_for(lambda: not running(child), 10, "the child to end with its parent")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(parent.pid, signal.SIGKILL)
        parent.stdout.close()
