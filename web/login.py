"""flask-login over the server-side sessions of engine/people/sessions.py."""

from __future__ import annotations

import time
import uuid

from flask import Flask, g, request, session
from flask_login import LoginManager, UserMixin, login_user, logout_user

from engine import runtime
from engine.database.models.people import User
from engine.people import sessions, single_sign_on
from web import devices

manager = LoginManager()
SESSION_TOKEN = "herald_sid"
# Signed in with a second step (or two-factor turned on in this session): what a workspace
# that requires two-factor sign-in asks of its members' sessions.
SECOND_STEP = "herald_2fa"
# Between the password and the code: who, when, and where to go after (no session yet).
PENDING = "herald_pending"
PENDING_SECONDS = 300
# Set on a session made by single sign-on: the ID token, for the provider's logout.
SSO_ID_TOKEN = "herald_sso_id_token"


class SignedIn(UserMixin):
    """The signed-in person as flask-login sees them; ``user`` is the row."""

    def __init__(self, user: User) -> None:
        self.user = user
        self.id = str(user.id)

    @property
    def email(self) -> str:
        return self.user.email

    @property
    def name(self) -> str:
        return self.user.name


def init_app(app: Flask) -> None:
    manager.init_app(app)
    manager.login_view = "auth.sign_in"
    manager.login_message = "Sign in to see this page."
    manager.login_message_category = "info"
    # The session is checked on the server at every request; "strong" would also end it
    # whenever a phone changes network.
    manager.session_protection = "basic"


@manager.user_loader
def load_user(user_id: str) -> SignedIn | None:
    token = session.get(SESSION_TOKEN)
    workspace_id = (request.view_args or {}).get("workspace_id")
    if isinstance(workspace_id, uuid.UUID):
        # A workspace page: its membership comes in the session's own query (one round trip
        # instead of two), for web/permissions.py to use in this request only.
        user, membership = sessions.user_and_membership(token, user_id, workspace_id)
        g.membership_read = (workspace_id, membership)
    else:
        user = sessions.user_for(token, user_id)
    return SignedIn(user) if user else None


def membership_read(workspace_id: object) -> tuple[bool, object]:
    """(True, membership or None) when this request's session query already read the
    membership of ``workspace_id``; (False, None) when it must be asked."""
    read = g.get("membership_read")
    if read is not None and read[0] == workspace_id:
        return True, read[1]
    return False, None


def sign_in(user: User, second_step: bool = False) -> None:
    """A new session: whatever the cookie held before (a fixated id, a pending second
    step) is dropped, so the session id changes at sign-in and again at the second step."""
    sessions.end(session.get(SESSION_TOKEN))
    session.clear()
    session[SESSION_TOKEN] = sessions.start(user, request.headers.get("User-Agent", ""),
                                            request.remote_addr or "")
    if second_step:
        session[SECOND_STEP] = True
    session.permanent = True
    login_user(SignedIn(user))
    devices.remember(str(user.id))


def await_second_step(user: User, target: str) -> None:
    """The password was right and the account has two-factor sign-in: nobody is signed in
    yet; the cookie only says whose code the next page asks for, for five minutes."""
    sessions.end(session.get(SESSION_TOKEN))
    logout_user()
    session.clear()
    session[PENDING] = {"user": str(user.id), "at": time.time(), "next": target}


def pending_second_step() -> tuple[User, str] | None:
    """(the user, where to go after) of a sign-in waiting for its code, if still valid."""
    pending = session.get(PENDING)
    if not isinstance(pending, dict) or time.time() - float(pending.get("at", 0)) > \
            PENDING_SECONDS:
        return None
    user = User.get_or_none(User.id == pending.get("user"))
    return (user, str(pending.get("next") or "")) if user else None


def current_token() -> str | None:
    return session.get(SESSION_TOKEN)


def sign_out() -> None:
    sessions.end(session.get(SESSION_TOKEN))
    logout_user()
    session.clear()


def provider_logout() -> str | None:
    """Before sign-out: the single sign-on provider's logout URL (RP-initiated logout)
    when this session came from it and its metadata offers one."""
    if SSO_ID_TOKEN not in session or not single_sign_on.configured():
        return None
    after = runtime.settings().public_url.rstrip("/") + "/"
    return single_sign_on.logout_url(session.get(SSO_ID_TOKEN), after)
