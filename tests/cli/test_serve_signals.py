"""`herald serve`'s workers quit once: a second quit signal never re-enters the first."""

from __future__ import annotations

import signal

import pytest

from cli.serve import _quit_once, _worker_ready, gunicorn_options


class _Worker:
    """Stands in for a gunicorn worker: the hook only wraps its quit handler."""

    def __init__(self) -> None:
        self.quits: list[int] = []

    def handle_quit(self, sig: int, frame: object) -> None:
        self.quits.append(sig)


@pytest.fixture
def handlers():
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGQUIT)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


def test_ctrl_c_then_the_masters_sigquit_quit_the_worker_once(handlers):
    worker = _Worker()
    _quit_once(worker)
    signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # the terminal's Ctrl-C
    signal.getsignal(signal.SIGQUIT)(signal.SIGQUIT, None)  # then the master's SIGQUIT
    assert worker.quits == [signal.SIGINT]


def test_the_server_configuration_installs_the_hook():
    assert gunicorn_options("127.0.0.1", 8000, 2)["post_worker_init"] is _worker_ready
