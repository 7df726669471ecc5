"""engine/sending/allowance.py owns the monthly allowance: its counter, every script that
takes or gives back a unit, and the rebuild from the database."""

from __future__ import annotations

from pathlib import Path

from engine import runtime
from engine.sending import allowance
from tests import factories

ROOT = Path(__file__).resolve().parents[3]


def test_no_other_module_writes_the_allowance_counter():
    """The counter's key and the script that takes from it are written in one place."""
    elsewhere = []
    for path in (ROOT / "engine").rglob("*.py"):
        if path == ROOT / "engine" / "sending" / "allowance.py":
            continue
        text = path.read_text()
        if "herald:allowance" in text or "local function take_" in text \
                or "local function give_back" in text:
            elsewhere.append(path.relative_to(ROOT).as_posix())
    assert elsewhere == []


def test_units_are_taken_all_or_none_and_given_back(settings):
    account = str(factories.account().id)
    runtime.redis().set(allowance.key(account), 0)
    assert allowance.take(account, 5, 3) is True
    assert allowance.take(account, 5, 3) is False  # only 2 left: none taken
    assert int(runtime.redis().get(allowance.key(account))) == 3
    allowance.give_back(account, 2)
    assert allowance.take(account, 5, 4) is True
    assert int(runtime.redis().get(allowance.key(account))) == 5


def test_a_lost_counter_is_rebuilt_before_units_are_taken(settings):
    ws = factories.workspace()
    factories.notification(ws, factories.email_payload())
    factories.notification(ws, factories.email_payload(), is_test=True)  # never counted
    account = str(ws.account_id)
    assert allowance.take(account, 3, 3) is False  # 1 used: 2 left
    assert int(runtime.redis().get(allowance.key(account))) == 1
    assert allowance.take(account, 3, 2) is True
