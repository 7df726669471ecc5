"""flask-login over the server-side sessions of engine/people/sessions.py."""

from __future__ import annotations

from flask import Flask, session
from flask_login import LoginManager, UserMixin, login_user, logout_user

from engine.people import sessions
from engine.people.models import User

manager = LoginManager()
SESSION_TOKEN = "herald_sid"


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
    user = sessions.user_for(session.get(SESSION_TOKEN), user_id)
    return SignedIn(user) if user else None


def sign_in(user: User) -> None:
    """A new session: whatever the cookie held before (a fixated id included) is dropped."""
    sessions.end(session.get(SESSION_TOKEN))
    session.clear()
    session[SESSION_TOKEN] = sessions.start(user)
    session.permanent = True
    login_user(SignedIn(user))


def sign_out() -> None:
    sessions.end(session.get(SESSION_TOKEN))
    logout_user()
    session.clear()
