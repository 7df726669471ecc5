"""The forms of sign-in, invitations and resets (rules live in engine/people)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import EmailField, PasswordField, StringField
from wtforms.validators import InputRequired

from engine.people.errors import PeopleError


class SignInForm(FlaskForm):
    email = EmailField("Email", validators=[InputRequired("Enter your email address.")],
                       render_kw={"autocomplete": "username"})
    password = PasswordField("Password", validators=[InputRequired("Enter your password.")],
                             render_kw={"autocomplete": "current-password"})


class AcceptForm(FlaskForm):
    name = StringField("Name", render_kw={"autocomplete": "name"})
    password = PasswordField("Password", render_kw={"autocomplete": "new-password"})


class CodeForm(FlaskForm):
    """The second sign-in step, and the code that turns two-factor sign-in on."""

    code = StringField("Code", validators=[InputRequired("Enter the code.")],
                       render_kw={"autocomplete": "one-time-code", "inputmode": "text",
                                  "spellcheck": "false", "autocapitalize": "off"})


class TurnOffTwoFactorForm(FlaskForm):
    """Turning one's own two-factor sign-in off asks for both factors again."""

    password = PasswordField("Password", render_kw={"autocomplete": "current-password"})
    code = StringField("Code", render_kw={"autocomplete": "one-time-code",
                                          "spellcheck": "false", "autocapitalize": "off"})


class SetPasswordForm(FlaskForm):
    password = PasswordField("Password", render_kw={"autocomplete": "new-password"})


class ResetRequestForm(FlaskForm):
    email = EmailField("Email", validators=[InputRequired("Enter your email address.")],
                       render_kw={"autocomplete": "username"})


def mark(form: FlaskForm, err: PeopleError) -> str | None:
    """Put an engine refusal on its field; returns the message when it has no field."""
    field = getattr(form, err.field, None) if err.field else None
    if field is None:
        return err.message
    field.errors = [*field.errors, err.message]
    return None
