"""Sign in at `/`, sign out, invitations, password resets and the account page."""

from __future__ import annotations

import logging
import re

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required

from engine import runtime
from engine.people import invitations, mail, resets, users
from engine.people.errors import PeopleError
from engine.plugins.contracts import DeliveryError
from web import login, throttle
from web.auth.forms import AcceptForm, ResetRequestForm, SetPasswordForm, SignInForm, mark
from web.core import errors
from web.core.views import home_for_user

blueprint = Blueprint("auth", __name__, template_folder="templates")
errors.register(blueprint)
log = logging.getLogger("herald.web")
SAFE_NEXT = re.compile(r"/[A-Za-z0-9\-._~/?=&%]*")


def _too_many(form, template: str, seconds: int, **context):
    minutes = max(1, round(seconds / 60))
    problem = f"Too many attempts. Try again in {minutes} minute{'s' if minutes > 1 else ''}."
    return render_template(template, form=form, problem=problem, **context), 429


@blueprint.route("/", methods=["GET", "POST"])
def sign_in():
    if current_user.is_authenticated and request.method == "GET":
        return home_for_user()
    form = SignInForm()
    if not form.validate_on_submit():
        return render_template("auth/sign_in.html", form=form), 400 if form.errors else 200
    if (wait := throttle.attempt("sign-in", form.email.data, request.remote_addr or "")):
        return _too_many(form, "auth/sign_in.html", wait)
    user = users.authenticate(form.email.data, form.password.data)
    if user is None:
        # One message for both: which addresses have an account is nobody's business.
        form.password.errors = ["The email address or the password is not right."]
        return render_template("auth/sign_in.html", form=form), 400
    login.sign_in(user)
    target = request.args.get("next", "")
    # Only a plain path of this site: "//host", "/\\host" or "/\t/host" (browsers drop the
    # tab) would leave it, an open redirect.
    if SAFE_NEXT.fullmatch(target) and not target.startswith("//"):
        return redirect(target)
    return home_for_user()


@blueprint.post("/sign-out")
def sign_out():
    login.sign_out()
    flash("You have signed out.", "info")
    return redirect(url_for("auth.sign_in"))


@blueprint.route("/invitations/<token>", methods=["GET", "POST"])
def accept_invitation(token: str):
    try:
        invitation = invitations.open_invitation(token)
    except PeopleError as err:
        return render_template("auth/link_refused.html", message=err.message), err.status
    existing = users.find(invitation.email)
    form = AcceptForm()
    context = {"invitation": invitation, "existing": existing}
    if request.method == "POST" and form.validate():
        try:
            user = invitations.accept(token, form.name.data or "", form.password.data or "")
        except PeopleError as err:
            problem = mark(form, err)
            return render_template("auth/accept.html", form=form, problem=problem,
                                   **context), err.status
        login.sign_in(user)
        flash(f"Welcome to {invitation.workspace.name}.", "info")
        return redirect(url_for("workspace.templates", workspace_id=invitation.workspace_id))
    return render_template("auth/accept.html", form=form, **context)


@blueprint.route("/reset", methods=["GET", "POST"])
def request_reset():
    form = ResetRequestForm()
    if not form.validate_on_submit():
        return render_template("auth/reset_request.html", form=form), 400 if form.errors else 200
    if (wait := throttle.attempt("reset", form.email.data, request.remote_addr or "")):
        return _too_many(form, "auth/reset_request.html", wait)
    send_reset_link(form.email.data)
    # The same answer whether or not the address has an account.
    return render_template("auth/reset_sent.html", email=form.email.data)


def send_reset_link(email: str) -> bool:
    """Email a reset link if ``email`` has an account; False when it could not be sent."""
    user = users.find(email)
    if user is None:
        return True
    issued = resets.issue(user, runtime.settings().public_url)
    text = (f"Hello {user.name},\n\nSomeone (we hope you) asked to set a new password for "
            f"your Herald account. Open this link within an hour to do so:\n\n{issued.url}\n\n"
            "If it was not you, ignore this message: your password stays as it is.\n")
    try:
        mail.send(user.email, "Set a new Herald password", text)
    except (DeliveryError, LookupError, ValueError) as err:
        log.warning("reset email to a user could not be sent: %s", err)
        return False
    return True


@blueprint.route("/reset/<token>", methods=["GET", "POST"])
def reset_password(token: str):
    try:
        resets.open_reset(token)
    except PeopleError as err:
        return render_template("auth/link_refused.html", message=err.message), err.status
    form = SetPasswordForm()
    if request.method == "POST" and form.validate():
        try:
            user = resets.complete(token, form.password.data or "")
        except PeopleError as err:
            problem = mark(form, err)
            return render_template("auth/reset.html", form=form, problem=problem), err.status
        login.sign_in(user)
        flash("Your new password is set.", "info")
        return home_for_user()
    return render_template("auth/reset.html", form=form)


@blueprint.route("/account", methods=["GET", "POST"])
@login_required
def account():
    if request.method == "POST":
        sent = send_reset_link(current_user.email)
        if sent:
            flash(f"We sent a link to set a new password to {current_user.email}.", "info")
        else:
            flash("The email could not be sent. Ask an operator for a reset link.", "error")
        return redirect(url_for("auth.account"))
    return render_template("auth/account.html")
