"""The settings forms; the rules behind them live in the engine."""

from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from wtforms import (
    BooleanField,
    DateField,
    EmailField,
    HiddenField,
    PasswordField,
    SelectField,
    StringField,
    TextAreaField,
    URLField,
)
from wtforms.validators import Optional

try:  # WTForms 3.3 and later: choices as tuples are deprecated
    from wtforms.fields.choices import SelectChoice
except ImportError:  # pragma: no cover - an older WTForms
    def SelectChoice(value: str, label: str) -> tuple[str, str]:
        return (value, label)

# A suppression's scopes in words (docs/delivery.md, "Suppression scope").
SCOPE_CHOICES = [SelectChoice("all", "All mail"), SelectChoice("marketing", "Marketing only")]


class ApiKeyForm(FlaskForm):
    name = StringField("Name")
    expires_on = DateField("Expires after (optional)", validators=[Optional()])


class SuppressionForm(FlaskForm):
    address = EmailField("Email address")
    # What it stops (docs/delivery.md, "Suppression scope"); the choices validate the value.
    scope = SelectField("Scope", choices=SCOPE_CHOICES, default="all")


class ImportForm(FlaskForm):
    csv_file = FileField("CSV file")


class InviteForm(FlaskForm):
    email = EmailField("Email")
    # Rendered as a select by the page, which offers only the roles the inviter may grant.
    role = StringField("Role", default="member")


class ProviderForm(FlaskForm):
    # One URL, or several (one a line) tried in order: failover (docs/delivery.md).
    provider_url = TextAreaField("Provider URL", render_kw={"autocomplete": "off",
                                                            "spellcheck": "false", "rows": 3})
    # Or an SMTP server by its parts, percent-encoded into a URL (web/settings/provider_fields.py).
    host = StringField("Host", render_kw={"autocomplete": "off", "spellcheck": "false"})
    port = StringField("Port", render_kw={"inputmode": "numeric", "autocomplete": "off"})
    user = StringField("User name", render_kw={"autocomplete": "off", "spellcheck": "false"})
    password = PasswordField("Password", render_kw={"autocomplete": "new-password"})
    tls = SelectField("TLS", default="starttls", choices=[
        SelectChoice("starttls", "STARTTLS (usually port 587)"),
        SelectChoice("ssl", "TLS from the first byte (usually port 465)"),
        SelectChoice("none", "None (a relay on a trusted network only)")])
    # A refused form's password or URLs, encrypted for this person (never shown).
    sealed = HiddenField()


class CallbackForm(FlaskForm):
    callback_url = URLField("Callback URL", render_kw={"autocomplete": "off",
                                                      "spellcheck": "false"})
    tracking = BooleanField("Call back opens and clicks too", default=True)


class TopicForm(FlaskForm):
    name = StringField("Name", render_kw={"autocomplete": "off", "spellcheck": "false"})
    description = StringField("Description")


class HelpTextForm(FlaskForm):
    help_text = TextAreaField("SMS help text", render_kw={"rows": 3})


class ProviderTestForm(FlaskForm):
    recipient = EmailField("Test recipient")


class DomainForm(FlaskForm):
    domain = StringField("Domain", render_kw={"autocomplete": "off", "spellcheck": "false"})


class SingleSenderForm(FlaskForm):
    address = EmailField("Email address")
    from_name = StringField("From name")
    postal_address = TextAreaField("Postal address", render_kw={"rows": 3})


def mark(field, message: str) -> None:
    field.errors = [*field.errors, message]


class RetentionForm(FlaskForm):
    retention_days = StringField("Retention (days)", render_kw={"inputmode": "numeric",
                                                                "autocomplete": "off"})


class EraseForm(FlaskForm):
    recipient = StringField("Recipient", render_kw={"autocomplete": "off",
                                                    "spellcheck": "false"})
