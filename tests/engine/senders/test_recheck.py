"""The hourly recheck on the worker: due domains only, expiry, and the 72-hour warning mail."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest

from engine.database.models import Account, Sender
from engine.database.models.inbox import InboxMessage
from engine.senders import mail, recheck
from engine.senders.domains import add_domain, check_domain, describe
from engine.senders.recheck import recheck_due
from engine.worker.worker import PERIODIC_TASKS, start_periodic_tasks
from tests import factories
from tests.engine.senders.helpers import publish

T0 = dt.datetime(2026, 3, 2, 9, 0, 0)


@pytest.fixture
def account(sender_settings):
    return Account.create(name="Acme", plan="business")


def test_each_domain_is_looked_up_again_once_its_last_check_is_an_hour_old(account, zone):
    sender = add_domain(account, "acme.example", now=T0)
    publish(zone, describe(sender))
    assert recheck_due(T0) == {"expired": 0, "checked": 1}
    assert Sender.get_by_id(sender.id).status == "verified"
    asked = len(zone.asked)
    assert recheck_due(T0 + dt.timedelta(minutes=59)) == {"expired": 0, "checked": 0}
    assert len(zone.asked) == asked
    assert recheck_due(T0 + dt.timedelta(hours=1)) == {"expired": 0, "checked": 1}
    assert len(zone.asked) > asked


def test_the_pass_expires_requests_and_leaves_failed_and_declared_domains_alone(account, zone):
    stale = add_domain(account, "stale.example", now=T0)
    failed = add_domain(account, "failed.example", now=T0)
    Sender.update(status="failed").where(Sender.id == failed.id).execute()
    Sender.create(account=account, kind="domain", value="declared.example")  # by apply
    counts = recheck_due(T0 + dt.timedelta(days=7))
    assert counts == {"expired": 1, "checked": 0}
    assert Sender.get_by_id(stale.id).status == "expired"
    assert Sender.get_by_id(failed.id).status == "failed"
    assert zone.asked == []


def test_the_worker_runs_the_recheck_beside_the_reconciler(account, zone, monkeypatch):
    assert ("herald-senders-recheck", recheck.run_periodically) in PERIODIC_TASKS
    sender = add_domain(account, "acme.example")
    publish(zone, describe(sender))
    monkeypatch.setattr(recheck, "PASS_SECONDS", 0.05)
    stop = threading.Event()
    try:
        start_periodic_tasks(stop)
        deadline = time.monotonic() + 20
        while Sender.get_by_id(sender.id).checked_at is None:
            assert time.monotonic() < deadline, "the worker's recheck never ran"
            time.sleep(0.05)
    finally:
        stop.set()
    assert Sender.get_by_id(sender.id).status == "verified"


def test_records_found_gone_mail_the_owners_and_admins_once(account, zone):
    from tests.web.conftest import make_user

    ws = factories.workspace(account)
    other = factories.workspace(factories.account())
    make_user("owner@acme.example", ws, "owner")
    make_user("admin@acme.example", ws, "admin")
    make_user("member@acme.example", ws, "member")
    make_user("stranger@else.example", other, "owner")
    sender = add_domain(account, "acme.example", workspace=ws, now=T0)
    publish(zone, describe(sender))
    check_domain(sender, now=T0)
    zone.remove("hrp.acme.example")
    check_domain(Sender.get_by_id(sender.id), now=T0 + dt.timedelta(hours=1))
    check_domain(Sender.get_by_id(sender.id), now=T0 + dt.timedelta(hours=2))
    warnings = list(InboxMessage.select().order_by(InboxMessage.id))
    assert [m.to for m in warnings] == [["admin@acme.example"], ["owner@acme.example"]]
    assert "hrp.acme.example" in warnings[0].text and "2026-03-05T10:00:00Z" in warnings[0].text


def test_a_domain_no_workspace_asked_for_warns_every_workspace_of_the_account(account):
    from tests.web.conftest import make_user

    one, two = factories.workspace(account), factories.workspace(account)
    make_user("a@acme.example", one, "admin")
    make_user("b@acme.example", two, "owner")
    make_user("c@acme.example", two, "member")
    sender = add_domain(account, "acme.example")  # as `herald senders add-domain` does
    assert mail.owners_and_admins(sender) == ["a@acme.example", "b@acme.example"]
