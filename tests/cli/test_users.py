"""`herald users invite|reset-password` as an operator runs them."""

from __future__ import annotations

import datetime as dt

from engine.catalog.keys import parse_time
from engine.database.models import utcnow
from engine.database.models.people import Invitation
from engine.people import invitations, resets, users
from tests import factories
from tests.cli.test_cli import herald  # noqa: F401 -- the fixture


def test_invite_prints_a_one_time_link_valid_seven_days(herald):  # noqa: F811
    ws = factories.workspace()
    out = herald("users", "invite", "Ada@Example.com", "--workspace", str(ws.id),
                 "--role", "admin")
    assert set(out) == {"email", "workspaceId", "role", "url", "expiresAt"}
    assert (out["email"], out["workspaceId"], out["role"]) == ("ada@example.com", str(ws.id),
                                                              "admin")
    assert out["url"].startswith("http://127.0.0.1:8000/invitations/")
    left = parse_time(out["expiresAt"]) - utcnow()
    assert dt.timedelta(days=6, hours=23) < left <= dt.timedelta(days=7)
    assert invitations.open_invitation(out["url"].rsplit("/", 1)[1]).email == "ada@example.com"
    assert Invitation.select().count() == 1


def test_refused_invitations_are_one_line_on_stderr(herald):  # noqa: F811
    ws = factories.workspace()
    for args in (["nobody", "--workspace", str(ws.id), "--role", "member"],
                 ["a@example.com", "--workspace", str(ws.id), "--role", "king"],
                 ["a@example.com", "--workspace", "not-a-uuid", "--role", "member"]):
        proc = herald("users", "invite", *args, ok=False)
        assert proc.returncode != 0 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not Invitation.select().exists()


def test_reset_password_prints_a_link_and_refuses_an_unknown_address(herald):  # noqa: F811
    users.create("ada@example.com", "Ada", "correct horse battery")
    out = herald("users", "reset-password", "ADA@example.com")
    assert set(out) == {"email", "url", "expiresAt"} and out["email"] == "ada@example.com"
    resets.complete(out["url"].rsplit("/", 1)[1], "a new password here")
    assert users.authenticate("ada@example.com", "a new password here") is not None
    proc = herald("users", "reset-password", "nobody@example.com", ok=False)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1


def test_reset_2fa_turns_it_off_and_ends_every_session(herald):  # noqa: F811
    import pyotp

    from engine.people import sessions, two_factor

    ada = users.create("ada@example.com", "Ada", "correct horse battery")
    two_factor.confirm(ada, pyotp.TOTP(two_factor.begin(ada)).now())
    token = sessions.start(ada)
    out = herald("users", "reset-2fa", "ADA@example.com")
    assert out == {"email": "ada@example.com", "twoFactor": "off", "wasOn": True}
    assert not two_factor.enabled(ada) and sessions.user_for(token, str(ada.id)) is None
    proc = herald("users", "reset-2fa", "nobody@example.com", ok=False)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1


def test_factors_are_listed_and_one_is_removed_with_every_session(herald):  # noqa: F811
    import pyotp

    from engine.database.models.people import AuditEvent, OidcIdentity, Passkey
    from engine.people import audit, roles, sessions, two_factor

    ws = factories.workspace()
    ada = users.create("ada@example.com", "Ada", "correct horse battery")
    roles.add(ws, ada, "owner")
    two_factor.confirm(ada, pyotp.TOTP(two_factor.begin(ada)).now())
    key = Passkey.create(user=ada, name="Work laptop", credential_id="AAEC",
                         public_key=b"\x01", sign_count=3)
    identity = OidcIdentity.create(user=ada, issuer="https://id.example.com",
                                   subject="s-1", email="ada@example.com")
    token = sessions.start(ada)
    out = herald("users", "factors", "ADA@example.com")
    assert out["email"] == "ada@example.com"
    assert [(f["id"], f["kind"]) for f in out["factors"]] == [
        ("password", "password"), ("totp", "totp"), (f"passkey:{key.id}", "passkey"),
        (f"oidc:{identity.id}", "single-sign-on")]
    assert out["factors"][2]["name"] == "Work laptop"
    removed = herald("users", "remove-factor", "ada@example.com", f"passkey:{key.id}")
    assert removed["removed"]["name"] == "Work laptop" and removed["sessionsEnded"] is True
    assert not Passkey.select().exists() and sessions.user_for(token, str(ada.id)) is None
    event = AuditEvent.get(AuditEvent.action == "passkey.removed")
    assert event.actor_label == audit.OPERATOR and "Work laptop" in event.subject
    for refused in ("password", "passkey:999", "nonsense"):
        proc = herald("users", "remove-factor", "ada@example.com", refused, ok=False)
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert herald("users", "remove-factor", "ada@example.com", "totp")["removed"]["kind"] \
        == "totp"
    assert not two_factor.enabled(ada)
    proc = herald("users", "factors", "nobody@example.com", ok=False)
    assert proc.returncode == 1
