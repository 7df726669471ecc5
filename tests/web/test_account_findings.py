"""Issue 36's findings, request by request (Flask's client, no browser), on a production-like
app: each of these failed before the fix (docs/web.md, "Security")."""

from __future__ import annotations

import json
import re

import pytest

from engine import runtime
from engine.database.models.inbox import InboxMessage
from engine.database.models.people import Membership, WebSession
from engine.people import invitations, roles, users
from engine.people.errors import PeopleError
from tests import factories
from tests.support.queued_mail import run_queued_mail
from tests.web.conftest import PASSWORD, make_user
from web import throttle

STRANGER, OWNER_IP, OFFICE = "203.0.113.9", "198.51.100.7", "192.0.2.44"


class Browser:
    """A browser without JavaScript, from one IP address: its cookies and CSRF token."""

    def __init__(self, app, ip: str = OFFICE) -> None:
        self.http = app.test_client()
        self.ip = ip
        self.json_token: str | None = None

    def token(self, path: str = "/") -> str:
        page = self.http.get(path, environ_base={"REMOTE_ADDR": self.ip},
                             follow_redirects=True).text
        found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page) or \
            re.search(r'"X-CSRFToken": "([^"]+)"', page)
        return found.group(1)

    def get(self, path: str):
        return self.http.get(path, environ_base={"REMOTE_ADDR": self.ip})

    def post(self, path: str, data: dict | None = None, token_from: str = "/", **kwargs):
        data = {"csrf_token": self.token(token_from), **(data or {})}
        return self.http.post(path, data=data, environ_base={"REMOTE_ADDR": self.ip},
                              **kwargs)

    def post_json(self, path: str, body: bytes, token_from: str):
        if self.json_token is None:
            self.json_token = self.token(token_from)
        token = self.json_token
        return self.http.post(path, data=body, content_type="application/json",
                              headers={"X-CSRFToken": token, "HX-Request": "true"},
                              environ_base={"REMOTE_ADDR": self.ip})

    def sign_in(self, email: str, password: str = PASSWORD):
        return self.post("/", {"email": email, "password": password})

    def signed_in(self) -> bool:
        return "Sign out" in self.get("/workspaces").text


def _token(url: str) -> str:
    return url.rsplit("/", 1)[1]


# 1. The invitation page was a password oracle that signed the attacker in.

def test_an_invitation_page_never_takes_an_existing_accounts_password(production_app):
    home, theirs = factories.workspace(), factories.workspace()
    make_user("victim@example.com", home, "owner", "Victim")
    path = "/invitations/" + _token(invitations.invite(
        theirs, "victim@example.com", "admin", None, None, "http://herald.test").url)
    attacker = Browser(production_app, STRANGER)
    page = attacker.get(path)
    assert 'name="password"' not in page.text and "Sign in to accept" in page.text
    answers = {attacker.post(path, {"password": guess}, token_from=path).status_code
               for guess in ["wrong guess number one", PASSWORD]}
    assert answers == {409}
    assert not attacker.signed_in()
    assert Membership.select().where(Membership.workspace == theirs).count() == 0
    assert not WebSession.select().exists()


# 2. Account pre-hijacking through another workspace's invitation.

def test_an_account_made_through_one_invitation_joins_no_other_by_itself(production_app):
    alpha, bravo = factories.workspace(), factories.workspace()
    make_user("admin@alpha.example", alpha, "admin", "Alpha Admin")
    make_user("owner@bravo.example", bravo, "owner", "Bravo Owner")
    attacker = users.find("admin@alpha.example")
    # Alpha's Admin invites Bravo's future hire and accepts the link itself (seen in a
    # development run, or handed over by an operator) with a password of its choosing ...
    path = "/invitations/" + _token(invitations.invite(
        alpha, "newhire@bravo.example", "member", attacker, "admin", "http://herald.test").url)
    Browser(production_app, STRANGER).post(path, {"name": "New Hire",
                                       "password": "attacker chosen secret"}, token_from=path)
    newhire = users.find("newhire@bravo.example")
    assert newhire is not None
    # ... and Bravo's Owner later invites the address: nothing joins by itself.
    owner = Browser(production_app, OWNER_IP)
    owner.sign_in("owner@bravo.example")
    page = owner.post(f"/w/{bravo.id}/settings/members", {"email": "newhire@bravo.example",
                                                          "role": "admin"})
    assert page.status_code == 200
    assert roles.membership(bravo, newhire) is None
    # In production the link only goes by mail to the address: not on the page.
    assert not re.search(r"/invitations/[\w-]{40,}", page.text)
    assert "Invitation link" not in page.text


# 3a. The Members page read differently for a known and an unknown address.

def test_the_members_page_reads_the_same_for_a_known_and_an_unknown_address(production_app):
    ws = factories.workspace()
    make_user("owner@example.com", ws, "owner", "Owner")
    make_user("known@example.com", factories.workspace(), "owner", "Known Person")
    owner = Browser(production_app)
    owner.sign_in("owner@example.com")

    def answer(email: str) -> tuple[int, str]:
        page = owner.post(f"/w/{ws.id}/settings/members", {"email": email, "role": "member"})
        text = re.sub(r'value="[^"]*"', "", page.text).replace(email, "ADDRESS")
        text = re.sub(r"until [^<]*", "", text)
        # The CSRF token htmx sends is signed with the second it was made: two pages a
        # second boundary apart differ there whatever the address.
        text = re.sub(r'"X-CSRFToken": "[^"]*"', "", text)
        return page.status_code, re.sub(r"<ul class=\"plain\">.*?</ul>", "", text, flags=re.S)

    known, unknown = answer("known@example.com"), answer("unknown@example.com")
    assert known == unknown
    assert "Known Person" not in known[1]
    assert Membership.select().where(Membership.workspace == ws).count() == 1


# 3b. Invitations outlived an inviter who was removed or demoted.

def test_invitations_end_with_their_inviters_removal_or_demotion(production_app):
    ws = factories.workspace()
    owner = make_user("owner@example.com", ws, "owner", "Owner")
    admin = make_user("admin@example.com", ws, "admin", "Admin")
    first = invitations.invite(ws, "one@example.com", "admin", admin, "admin", "http://h")
    second = invitations.invite(ws, "two@example.com", "member", admin, "admin", "http://h")
    roles.change_role(roles.membership(ws, admin), "member", owner)
    for issued in (first, second):
        with pytest.raises(PeopleError, match=r"not valid|ended"):
            invitations.open_invitation(_token(issued.url))
    roles.change_role(roles.membership(ws, admin), "admin", owner)
    third = invitations.invite(ws, "three@example.com", "member", admin, "admin", "http://h")
    roles.remove(roles.membership(ws, admin), owner)
    page = Browser(production_app).get("/invitations/" + _token(third.url))
    assert page.status_code in (404, 410) and "Accept invitation" not in page.text
    assert users.find("three@example.com") is None


# 3c. The reset mail went out in the request: 510 ms for an account, 5 ms for none.

def test_reset_and_invitation_mail_go_from_the_queue_not_the_request(production_app):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    browser = Browser(production_app)
    for email in ("ada@example.com", "nobody@example.com"):
        answer = browser.post("/reset", {"email": email}, token_from="/reset")
        assert answer.status_code == 200 and "on its way" in answer.text
    assert InboxMessage.select().count() == 0  # nothing was sent while the request waited
    assert run_queued_mail() == 2  # one job for each, the same whether or not an account
    assert [m.to for m in InboxMessage.select()] == [["ada@example.com"]]
    browser.sign_in("ada@example.com")
    browser.post(f"/w/{ws.id}/settings/members", {"email": "new@example.com",
                                                  "role": "member"})
    assert InboxMessage.select().count() == 1
    assert run_queued_mail() == 1
    assert InboxMessage.select().count() == 2


# 3d. Ten wrong sign-ins from anyone locked the owner out; successes counted.

def test_successful_sign_ins_are_not_counted(production_app):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    browser = Browser(production_app)
    for _ in range(throttle.PAIR_FAILURES + 5):
        assert browser.sign_in("ada@example.com").status_code == 302
        browser.post("/sign-out", token_from="/workspaces")


def test_a_strangers_guesses_delay_the_owner_never_lock_them_out(production_app, windows_held):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    stranger = Browser(production_app, STRANGER)
    answers = [stranger.sign_in("ada@example.com", f"guess number {i}").status_code
               for i in range(30)]
    # The first failures are free, then the account's delay refuses the stranger's tries.
    assert answers[:throttle.FREE_FAILURES] == [400] * throttle.FREE_FAILURES
    assert 429 in answers
    owner = Browser(production_app, OWNER_IP)
    waited = owner.sign_in("ada@example.com")
    if waited.status_code == 429:  # a delay, never a wall: at most MAX_DELAY seconds
        assert int(waited.headers["Retry-After"]) <= throttle.MAX_DELAY + 1
        _delay_passed("ada@example.com")
    assert owner.sign_in("ada@example.com").status_code == 302
    assert owner.signed_in()


def test_ten_failures_from_one_address_wall_that_address_and_account_only(production_app,
                                                                          windows_held):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    make_user("bob@example.com", factories.workspace(), "owner", "Bob")
    typo = Browser(production_app, STRANGER)
    for i in range(throttle.PAIR_FAILURES):
        _delay_passed("ada@example.com")
        assert typo.sign_in("ada@example.com", f"wrong {i}").status_code == 400
    _delay_passed("ada@example.com")
    assert typo.sign_in("ada@example.com").status_code == 429  # even the right password
    assert typo.sign_in("bob@example.com").status_code == 302  # another account: allowed
    assert Browser(production_app, OWNER_IP).sign_in("ada@example.com").status_code == 302


def _delay_passed(address: str) -> None:
    """As if the account's delay since its last failure had passed (no sleep)."""
    redis = runtime.redis()
    for key in redis.scan_iter("herald:web:sign-in:last:*"):
        redis.set(key, "0")


# 3e. The editor's costly requests had no per-person limit; JSON had no shape limit.

def _member(production_app):
    ws = factories.workspace()
    make_user("member@example.com", ws, "member", "Member")
    browser = Browser(production_app)
    browser.sign_in("member@example.com")
    return ws, factories.template(ws), browser


def test_previews_draft_saves_and_test_sends_are_limited_per_person(production_app, windows_held):
    ws, template, member = _member(production_app)
    editor = f"/w/{ws.id}/templates/{template.id}"
    body = json.dumps({"subject": "Hi", "body": "<p>Hi</p>", "sample": "{}",
                       "editor": "a" * 16}).encode()
    for kind, path in (("preview", "/preview"), ("draft", "/draft"),
                       ("test-send", "/test-sends")):
        codes = [member.post_json(editor + path, body, editor).status_code
                 for _ in range(throttle.per_minute(kind) + 1)]
        assert 429 not in codes[:-1] and codes[-1] == 429, (kind, codes[-3:])
    other = Browser(production_app)
    make_user("other@example.com", ws, "member", "Other")
    other.sign_in("other@example.com")
    answer = other.post_json(editor + "/preview", body, editor)
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("body", [
    b'{"body": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",  # 100 KB of nested arrays
    # Within every count, so parsed at once: the depth is read off the parsed value.
    b'{"body": ' + b"[" * 40 + b"]" * 40 + b"}",
    b'{"body": ' + b"[" * 5_000 + b"]" * 5_000 + b"}",  # past the parser's recursion
    b'{"body": [' + b"0," * 30_000 + b"0]}",  # more values than the API takes
    b'{"body": "unfinished',
])
def test_the_web_json_endpoints_have_the_apis_shape_limits(production_app, body):
    ws, template, member = _member(production_app)
    editor = f"/w/{ws.id}/templates/{template.id}"
    for path in ("/draft", "/preview", "/test-sends"):
        answer = member.post_json(editor + path, body, editor)
        assert answer.status_code == 400, (path, answer.status_code)
        assert "The request was refused" in answer.text


# A password reset ends every other session.

def test_a_password_reset_ends_every_other_session(production_app):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    laptop, phone = Browser(production_app), Browser(production_app, OWNER_IP)
    laptop.sign_in("ada@example.com")
    phone.sign_in("ada@example.com")
    phone.post("/reset", {"email": "ada@example.com"}, token_from="/reset")
    run_queued_mail()
    link = re.search(r"http://\S+/reset/(\S+)", InboxMessage.get().text).group(1)
    done = phone.post(f"/reset/{link}", {"password": "an entirely new passphrase"},
                      token_from=f"/reset/{link}")
    assert done.status_code in (200, 302)
    assert phone.signed_in() and not laptop.signed_in()
    assert WebSession.select().count() == 1
