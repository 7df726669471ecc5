"""The people services without a browser: links used once, the last Owner, the audit log."""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from engine.database import prepared as store_prepared
from engine.database.db import database
from engine.database.models import utcnow
from engine.database.models.people import Invitation, Membership, PasswordReset, WebSession
from engine.people import (
    audit,
    invitations,
    passwords,
    resets,
    roles,
    sessions,
    tokens,
    users,
)
from engine.people.errors import PeopleError
from tests import factories

URL = "http://herald.test"
PASSWORD = "correct horse battery"


def _token(url: str) -> str:
    return url.rsplit("/", 1)[1]


def test_only_the_hash_of_a_link_is_stored_and_it_works_once(settings):
    ws = factories.workspace()
    issued = invitations.invite(ws, "Ada@Example.com", "admin", None, None, URL)
    token = _token(issued.url)
    row = Invitation.get_by_id(issued.invitation.id)
    assert row.email == "ada@example.com" and token not in row.token_hash
    user = invitations.accept_new(token, "Ada", PASSWORD)
    assert roles.membership(ws, user).role == "admin"
    with pytest.raises(PeopleError, match="already been used"):
        invitations.accept_new(token, "Eve", PASSWORD)


def test_an_expired_invitation_is_refused_and_creates_nobody(settings):
    ws = factories.workspace()
    issued = invitations.invite(ws, "late@example.com", "member", None, None, URL)
    Invitation.update(expires_at=utcnow() - dt.timedelta(seconds=1)).execute()
    with pytest.raises(PeopleError, match="expired"):
        invitations.accept_new(_token(issued.url), "Late", PASSWORD)
    assert users.find("late@example.com") is None


def test_a_short_password_refuses_the_acceptance_and_keeps_the_link(settings):
    ws = factories.workspace()
    token = _token(invitations.invite(ws, "a@example.com", "member", None, None, URL).url)
    with pytest.raises(PeopleError) as refused:
        invitations.accept_new(token, "A", "123456789")
    assert refused.value.field == "password"
    assert invitations.accept_new(token, "A", PASSWORD).email == "a@example.com"


def test_an_admin_cannot_invite_an_owner(settings):
    ws = factories.workspace()
    with pytest.raises(PeopleError) as refused:
        invitations.invite(ws, "boss@example.com", "owner", None, "admin", URL)
    assert refused.value.status == 403
    assert not Invitation.select().exists()


def test_a_workspace_always_keeps_one_owner(settings):
    ws = factories.workspace()
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    bob = users.create("bob@example.com", "Bob", PASSWORD)
    owner = roles.add(ws, ada, "owner")
    with pytest.raises(PeopleError, match="one Owner"):
        roles.change_role(owner, "admin", ada)
    with pytest.raises(PeopleError, match="one Owner"):
        roles.remove(owner, ada)
    roles.change_role(roles.add(ws, bob, "member"), "owner", ada)
    roles.remove(owner, ada)  # now Ada may leave
    assert [m.user.email for m in Membership.select()] == ["bob@example.com"]
    assert [e.action for e in audit.recent(ws)] == ["member.left", "member.role_changed"]


def test_a_reset_ends_every_session_and_every_other_link(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    session = sessions.start(ada)
    first = resets.issue(ada, URL)
    second = resets.issue(ada, URL, resets.BY_OPERATOR)
    assert (second.expires_at - first.expires_at) > dt.timedelta(hours=22)
    resets.complete(_token(first.url), "a new password here")
    assert sessions.user_for(session, str(ada.id)) is None
    assert not WebSession.select().exists()
    with pytest.raises(PeopleError, match="already been used"):
        resets.complete(_token(second.url), "yet another password")
    assert users.authenticate("ada@example.com", "a new password here").id == ada.id
    assert users.authenticate("ada@example.com", PASSWORD) is None
    assert PasswordReset.select().where(PasswordReset.used_at.is_null()).count() == 0


def test_a_session_belongs_to_its_user_only(settings):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    bob = users.create("bob@example.com", "Bob", PASSWORD)
    token = sessions.start(ada)
    assert sessions.user_for(token, str(ada.id)).id == ada.id
    assert sessions.user_for(token, str(bob.id)) is None
    sessions.end(token)
    assert sessions.user_for(token, str(ada.id)) is None


def test_the_session_and_the_membership_come_in_one_query_read_afresh(settings):
    ws, other = factories.workspace(), factories.workspace()
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    bob = users.create("bob@example.com", "Bob", PASSWORD)
    roles.add(ws, ada, "admin")
    token = sessions.start(ada)
    user, membership = sessions.user_and_membership(token, str(ada.id), ws.id)
    assert user.id == ada.id and user.email == "ada@example.com"
    assert (membership.role, membership.workspace.id, membership.workspace.name) == (
        "admin", ws.id, ws.name)
    # Signed in, but not a member of that workspace.
    assert sessions.user_and_membership(token, str(ada.id), other.id)[0].id == ada.id
    assert sessions.user_and_membership(token, str(ada.id), other.id)[1] is None
    assert sessions.user_and_membership(token, str(bob.id), ws.id) == (None, None)
    # A removal, then a sign-out, count at the very next request (nothing is kept).
    Membership.delete().where(Membership.user == ada).execute()
    assert sessions.user_and_membership(token, str(ada.id), ws.id)[1] is None
    sessions.end(token)
    assert sessions.user_and_membership(token, str(ada.id), ws.id) == (None, None)
    late = sessions.start(ada)
    WebSession.update(expires_at=utcnow() - dt.timedelta(seconds=1)).execute()
    assert sessions.user_and_membership(late, str(ada.id), ws.id) == (None, None)
    assert sessions.user_and_membership(None, str(ada.id), ws.id) == (None, None)


def test_a_prepared_select_keeps_only_its_sql_and_compiles_on_both_databases(settings, caplog):
    ada = users.create("ada@example.com", "Ada", PASSWORD)
    ws = factories.workspace()
    roles.add(ws, ada, "member")
    prepared = sessions._SESSION_AND_MEMBERSHIP
    assert prepared._compile() is not None  # the fast path, not the fallback
    first, second = sessions.start(ada), sessions.start(ada)
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        assert prepared.first(ws.id, tokens.hash_token(first), utcnow()).user.id == ada.id
        sessions.end(first)
        assert prepared.first(ws.id, tokens.hash_token(first), utcnow()) is None
        row = prepared.first(ws.id, tokens.hash_token(second), utcnow())
        # The columns' layout, worked out at the first row, fills each model the same way
        # for another row, and leaves an outer join's missing row empty.
        elsewhere = prepared.first(factories.workspace().id, tokens.hash_token(second), utcnow())
    assert row.user.membership.role == "member" and row.user.membership.workspace.id == ws.id
    assert row.user.email == "ada@example.com" and row.token_hash == tokens.hash_token(second)
    assert elsewhere.user.id == ada.id and getattr(elsewhere.user, "membership", None) is None
    assert sessions.user_and_membership(second, str(ada.id), ws.id)[1].role == "member"
    sent = [r.msg[0] for r in caplog.records if r.name == "peewee" and isinstance(r.msg, tuple)]
    reads = [s for s in sent if "web_session" in s or "herald_session_and_membership" in s]
    if store_prepared.enabled(database.obj):
        # A named statement on PostgreSQL: planned once per connection, not at each page.
        held = {row[0] for row in database.execute_sql(
            "SELECT name FROM pg_prepared_statements").fetchall()}
        assert "herald_session_and_membership" in held
        assert sum(s.startswith("EXECUTE herald_session_and_membership") for s in reads) == 4
        assert not any(s.startswith("SELECT") for s in reads)
    else:  # SQLite: the text itself
        assert sum(s.startswith("SELECT") for s in reads) == 4


def test_passwords_are_argon2_and_follow_the_rules(settings):
    hashed = passwords.hash_password(PASSWORD)
    assert hashed.startswith("$argon2id$") and passwords.verify(hashed, PASSWORD)
    assert not passwords.verify(hashed, PASSWORD + "!")
    assert not passwords.verify(None, PASSWORD)
    for bad in ("short", " " * 12, "x" * 1001):
        with pytest.raises(PeopleError):
            passwords.check_rules(bad)


def test_the_audit_log_refuses_a_secret_in_its_details(settings):
    ws = factories.workspace()
    with pytest.raises(ValueError, match="secret"):
        audit.record(ws, None, "webhook_secret.rotated", details={"secret": "whsec_x"})
    event = audit.record(ws, None, "member.invited", "a@example.com", {"role": "admin"})
    assert event.actor_label == audit.OPERATOR


@pytest.mark.parametrize("password", [
    "member@a.example", "Member@A.Example", "memberaexample", "MemberAExample!",
    "memberaexample2026", "owner@b.example",  # another member's address
    "ada.lovelace@example.org"])
def test_a_password_made_of_an_address_is_refused(password):
    with pytest.raises(PeopleError, match="email address"):
        passwords.check_rules(password, ("member@a.example", "Member A"))


def test_a_password_with_more_than_the_address_is_judged_on_the_rest():
    passwords.check_rules("member@a.example violet tractor lamp",
                          ("member@a.example", "Member A"))
