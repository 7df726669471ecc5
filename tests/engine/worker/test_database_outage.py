"""The worker's delivery thread waits out a lost database (a real connection cut: a TCP
proxy in front of PostgreSQL, or SQLite's folder gone) and delivers once it is back, with
one line when the outage begins and one when it ends, never a traceback."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from engine import runtime
from engine.database.models import Notification
from engine.worker import handoff
from tests import factories
from tests.support.processes import wait_for
from tests.support.tcp_proxy import TcpProxy


class _Outage:
    """The engine bound to the test database through something the test can cut."""

    def __init__(self, url: str, tmp_path: Path) -> None:
        parts = urlsplit(url)
        self.proxy: TcpProxy | None = None
        if parts.scheme == "sqlite":
            real = Path(parts.path).parent
            self.link = tmp_path / "db-folder"
            self.link.symlink_to(real)
            self.target = real
            self.url = f"sqlite:///{self.link / Path(parts.path).name}"
        else:
            self.proxy = TcpProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
            self.url = url.replace(f"{parts.hostname}:{parts.port}",
                                   f"127.0.0.1:{self.proxy.port}")

    def cut(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        else:
            self.link.unlink()

    def restore(self) -> None:
        if self.proxy is not None:
            self.proxy.start()
        else:
            self.link.symlink_to(self.target)

    def close(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        elif not os.path.lexists(self.link):
            self.restore()


@pytest.fixture
def outage(settings, tmp_path):
    made = _Outage(settings.database_url, tmp_path)
    yield made
    made.close()
    runtime.configure(settings)


def test_the_delivery_thread_waits_for_the_database_and_then_delivers(settings, outage,
                                                                      caplog):
    notification = factories.notification(factories.workspace(), factories.email_payload())
    nid = str(notification.id)
    runtime.configure(settings.with_changes(database_url=outage.url))
    caplog.set_level(logging.INFO)
    outage.cut()
    handoff.start()
    try:
        handoff.hand_delivery(nid)
        wait_for(lambda: any("database unreachable" in r.getMessage() for r in caplog.records),
                 30, "the outage line")
        outage.restore()
        assert handoff.taken(nid)
    finally:
        handoff.close()  # waits for the delivery handed over
    runtime.configure(settings)
    assert Notification.get_by_id(nid).status == "delivered"
    messages = [r.getMessage() for r in caplog.records if r.name == "herald.delivery"]
    assert sum("database unreachable" in m for m in messages) == 1
    assert sum("database is back" in m for m in messages) == 1
    assert any(m.startswith("delivery attempt 1: delivered") for m in messages)
    assert not any(r.exc_info for r in caplog.records)
