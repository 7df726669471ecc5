"""Two-factor sign-in, password strength, session lifetimes and the migration step that
brings them (issue 36), without a browser."""

from __future__ import annotations

import datetime as dt
import time

import pyotp
import pytest

from engine.database.models import utcnow
from engine.database.models.people import RecoveryCode, TwoFactor, WebSession
from engine.people import passwords, sessions, two_factor, users
from engine.people.errors import PeopleError
from tests import factories

PASSWORD = "correct horse battery"


def _on(user) -> tuple[pyotp.TOTP, list[str]]:
    totp = pyotp.TOTP(two_factor.begin(user))
    return totp, two_factor.confirm(user, totp.now())


def test_the_secret_is_encrypted_and_codes_are_kept_hashed(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    secret = two_factor.begin(ada)
    assert not two_factor.enabled(ada)
    raw = TwoFactor._meta.database.execute_sql("SELECT secret FROM two_factor").fetchone()[0]
    assert secret not in raw
    codes = two_factor.confirm(ada, pyotp.TOTP(secret).now())
    assert two_factor.enabled(ada) and len(codes) == 10
    stored = [r.code_hash for r in RecoveryCode.select()]
    assert not set(codes) & set(stored) and len(stored) == 10


def test_a_wrong_first_code_keeps_it_off(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    totp = pyotp.TOTP(two_factor.begin(ada))
    wrong = "000000" if totp.now() != "000000" else "111111"
    with pytest.raises(PeopleError) as refused:
        two_factor.confirm(ada, wrong)
    assert refused.value.field == "code" and not two_factor.enabled(ada)


def test_no_code_works_twice_and_each_recovery_code_once(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    totp, codes = _on(ada)
    assert two_factor.verify(ada, totp.now()) is None  # used to turn it on
    later = totp.at(time.time() + totp.interval)
    assert two_factor.verify(ada, later) == "app"
    assert two_factor.verify(ada, later) is None
    assert two_factor.verify(ada, totp.at(time.time() - 5 * totp.interval)) is None
    assert two_factor.verify(ada, codes[0].upper()) == "recovery"
    assert two_factor.verify(ada, codes[0]) is None
    assert two_factor.recovery_codes_left(ada) == 9
    assert two_factor.verify(ada, "not a code") is None


def test_an_operator_turns_it_off(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    _on(ada)
    assert two_factor.turn_off(ada) is True
    assert not two_factor.enabled(ada) and not RecoveryCode.select().exists()
    assert two_factor.turn_off(ada) is False


def test_the_qr_code_is_inline_svg_with_no_other_origin(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    svg = two_factor.qr_svg(two_factor.provisioning_uri(ada, two_factor.begin(ada)))
    assert svg.startswith("<svg") and "http" not in svg and "style=" not in svg


def test_a_workspace_requires_two_factor(settings):
    ws = factories.workspace()
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    assert not two_factor.required_in(ws.id)
    two_factor.require(ws, True, ada)
    assert two_factor.required_in(ws.id)
    two_factor.require(ws, False, ada)
    assert not two_factor.required_in(ws.id)


@pytest.mark.parametrize(("password", "reason"), [
    ("password1234", "most common"),
    ("qwertyuiop", "most common"),
    ("abcdefghijk", "easy to guess"),
    ("adalovelace", "easy to guess"),
    ("x" * 65, "at most 64"),
    ("short one", "at least 10"),
])
def test_weak_and_common_passwords_are_refused_with_a_reason(settings, password, reason):
    with pytest.raises(PeopleError, match=reason):
        users.create("ada.lovelace@example.com", "Ada Lovelace", password)


def test_a_long_passphrase_needs_no_digits_nor_symbols(settings):
    assert users.create("ada@example.com", "Ada", "lantern orbit cactus").email


def test_a_session_ends_when_idle_and_at_its_absolute_lifetime(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    token = sessions.start(ada, "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0")
    row = WebSession.get()
    assert row.user_agent.startswith("Mozilla") and row.expires_at <= utcnow() + dt.timedelta(
        minutes=settings.session_idle_minutes)
    # Used after a while: the idle deadline moves on.
    WebSession.update(last_seen_at=utcnow() - dt.timedelta(hours=1),
                      expires_at=utcnow() + dt.timedelta(hours=1)).execute()
    assert sessions.user_for(token, str(ada.id)) == ada
    assert WebSession.get().expires_at > utcnow() + dt.timedelta(hours=11)
    # Never past the absolute lifetime, however much it is used.
    WebSession.update(created_at=utcnow() - dt.timedelta(days=30, seconds=-60),
                      last_seen_at=utcnow() - dt.timedelta(hours=1)).execute()
    assert sessions.user_for(token, str(ada.id)) == ada
    assert WebSession.get().expires_at <= utcnow() + dt.timedelta(seconds=60)
    # Idle past its deadline: gone.
    WebSession.update(expires_at=utcnow() - dt.timedelta(seconds=1)).execute()
    assert sessions.user_for(token, str(ada.id)) is None


def test_a_person_ends_another_session_of_theirs_only(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    eve = users.create("eve@example.com", "Eve", PASSWORD)
    mine, other = sessions.start(ada), sessions.start(ada)
    evil = sessions.start(eve)
    rows = {r.token_hash: r for r in sessions.live_of(ada)}
    assert len(rows) == 2
    (other_hash,) = [h for h, r in rows.items() if not sessions.is_current(r, mine)]
    assert not sessions.end_other(eve, other_hash, evil)  # not Eve's
    assert not sessions.end_other(ada, next(h for h in rows if h != other_hash), mine)
    assert sessions.end_other(ada, other_hash, mine)
    assert sessions.user_for(other, str(ada.id)) is None
    assert sessions.user_for(mine, str(ada.id)) == ada


def test_verify_still_reads_a_long_password_set_before_the_64_rule(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    long_one = "lantern orbit cactus " * 5
    ada.password_hash = passwords._hasher().hash(long_one)
    ada.save()
    assert users.authenticate("ada@example.com", long_one) == ada


def test_the_migration_step_adds_the_session_columns_and_tables(settings, tmp_path):
    from engine.database.migrations import MIGRATIONS, _trustworthy_accounts, upgrade
    from tests.support.old_schema import database_before

    with database_before(_trustworthy_accounts, tmp_path) as old:
        from engine.database.models.people import PEOPLE_MODELS

        old.create_tables(PEOPLE_MODELS, safe=True)
        for column in ("last_seen_at", "user_agent"):
            old.execute_sql(f'ALTER TABLE "web_session" DROP COLUMN "{column}"')
        old.execute_sql('DROP TABLE "two_factor"')
        before = MIGRATIONS.index(_trustworthy_accounts)
        assert upgrade(old) == {"from": before, "to": len(MIGRATIONS)}
        assert {"last_seen_at", "user_agent"} <= {c.name for c in old.get_columns(
            "web_session")}
        assert old.table_exists("two_factor")


def test_an_owners_requirement_reaches_every_process_at_its_next_page(settings, monkeypatch):
    # Another process: its copy of the policy is not dropped by the change made here.
    ws = factories.workspace()
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    assert not two_factor.required_in(ws.id)  # this process's copy is loaded
    monkeypatch.setattr(two_factor, "forget_required", lambda: None)
    two_factor.require(ws, True, ada)
    assert two_factor.required_in(ws.id)
    two_factor.require(ws, False, ada)
    assert not two_factor.required_in(ws.id)
