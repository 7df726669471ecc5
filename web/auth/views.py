"""Sign in at `/` (and its second step), sign out, invitations and password resets."""

from __future__ import annotations

import logging
import re

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user

from engine import runtime
from engine.people import invitations, outbox, resets, two_factor, users
from engine.people.errors import PeopleError
from web import devices, login, throttle
from web.auth.forms import (
    AcceptForm,
    CodeForm,
    ResetRequestForm,
    SetPasswordForm,
    SignInForm,
    mark,
)
from web.core import errors
from web.core.views import home_for_user

blueprint = Blueprint("auth", __name__, template_folder="templates")
errors.register(blueprint)
log = logging.getLogger("herald.web")
SAFE_NEXT = re.compile(r"/[A-Za-z0-9\-._~/?=&%]*")


def _too_many(form, template: str, seconds: int, **context):
    if seconds < 90:
        wait = f"{seconds} second{'s' if seconds > 1 else ''}"
    else:
        minutes = round(seconds / 60)
        wait = f"{minutes} minute{'s' if minutes > 1 else ''}"
    problem = f"Too many attempts. Try again in {wait}."
    return (render_template(template, form=form, problem=problem, **context), 429,
            {"Retry-After": str(seconds)})


def _safe_next(target: str) -> str:
    """Only a plain path of this site: "//host", "/\\host" or "/\t/host" (browsers drop the
    tab) would leave it, an open redirect."""
    if SAFE_NEXT.fullmatch(target) and not target.startswith("//"):
        return target
    return ""


def _client_ip() -> str:
    return request.remote_addr or ""


@blueprint.route("/", methods=["GET", "POST"])
def sign_in():
    if current_user.is_authenticated and request.method == "GET":
        return home_for_user()
    form = SignInForm()
    if runtime.settings().oidc_only and request.method == "POST":
        # HERALD_OIDC_ONLY: no password signs in here (`herald users reset-password` still
        # gives an operator's link, which signs its person in).
        return render_template("auth/sign_in.html", form=SignInForm(formdata=None),
                               problem="Sign in with single sign-on."), 403
    if not form.validate_on_submit():
        return render_template("auth/sign_in.html", form=form), 400 if form.errors else 200
    address, ip = form.email.data, _client_ip()
    known = users.find(address)
    device = devices.device_of(str(known.id) if known else None)
    if (wait := throttle.wait_before("sign-in", address, ip, device)):
        return _too_many(form, "auth/sign_in.html", wait)
    user = users.authenticate(address, form.password.data)
    if user is None:
        throttle.failed("sign-in", address, ip, device)
        # One message for both: which addresses have an account is nobody's business.
        form.password.errors = ["The email address or the password is not right."]
        return render_template("auth/sign_in.html", form=form), 400
    throttle.succeeded("sign-in", address, ip)
    target = _safe_next(request.args.get("next", ""))
    if two_factor.enabled(user):
        login.await_second_step(user, target)
        return redirect(url_for("auth.second_step"), 303)
    login.sign_in(user)
    return redirect(target) if target else home_for_user()


@blueprint.route("/sign-in/code", methods=["GET", "POST"])
def second_step():
    """The code from the authenticator app, or a recovery code, limited as the password is
    (per account, per IP, per both) and counted apart from it."""
    pending = login.pending_second_step()
    if pending is None:
        flash("Sign in again: the page for your code is valid for five minutes.", "info")
        return redirect(url_for("auth.sign_in"))
    user, target = pending
    form = CodeForm()
    if not form.validate_on_submit():
        return render_template("auth/second_step.html", form=form), 400 if form.errors else 200
    account, ip = str(user.id), _client_ip()
    device = devices.device_of(account)
    if (wait := throttle.wait_before("second-step", account, ip, device)):
        return _too_many(form, "auth/second_step.html", wait)
    kind = two_factor.verify(user, form.code.data or "")
    if kind is None:
        throttle.failed("second-step", account, ip, device)
        form.code.errors = ["That code is not right, or it was used already. Enter the code "
                            "your app shows now, or an unused recovery code."]
        return render_template("auth/second_step.html", form=form), 400
    throttle.succeeded("second-step", account, ip)
    login.sign_in(user, second_step=True)
    if kind == "recovery":
        left = two_factor.recovery_codes_left(user)
        flash(f"You used a recovery code: {left} left. Each works once.", "info")
    return redirect(target) if target else home_for_user()


@blueprint.post("/sign-out")
def sign_out():
    provider = login.provider_logout()
    login.sign_out()
    flash("You have signed out.", "info")
    # Signed in by single sign-on: the provider's session ends too, where it offers that.
    return redirect(provider or url_for("auth.sign_in"), 303 if provider else 302)


@blueprint.route("/invitations/<token>", methods=["GET", "POST"])
def accept_invitation(token: str):
    """A new address sets a name and a password here; an existing account signs in first
    (the sign-in, its limits and its second step) and then accepts: this page never takes
    an existing account's password."""
    try:
        invitation = invitations.open_invitation(token)
    except PeopleError as err:
        return render_template("auth/link_refused.html", message=err.message), err.status
    form = AcceptForm()
    signed_in = current_user.is_authenticated
    context = {"invitation": invitation, "signed_in": signed_in,
               "existing": not signed_in and users.find(invitation.email) is not None,
               "other": signed_in and current_user.email != invitation.email,
               "sign_in_url": url_for("auth.sign_in", next=request.path)}
    if request.method != "POST":
        return render_template("auth/accept.html", form=form, **context)
    if not form.validate() or context["existing"] or context["other"] or (
            runtime.settings().oidc_only and not signed_in):
        return render_template("auth/accept.html", form=form, **context), 409
    try:
        if signed_in:
            invitations.accept_signed_in(token, current_user.user)
        else:
            user = invitations.accept_new(token, form.name.data or "", form.password.data or "")
            login.sign_in(user)
    except PeopleError as err:
        problem = mark(form, err)
        return render_template("auth/accept.html", form=form, problem=problem,
                               **context), err.status
    flash(f"Welcome to {invitation.workspace.name}.", "info")
    return redirect(url_for("workspace.templates", workspace_id=invitation.workspace_id))


@blueprint.route("/reset", methods=["GET", "POST"])
def request_reset():
    form = ResetRequestForm()
    if runtime.settings().oidc_only:
        return render_template("auth/sso_refused.html", title="Passwords are not used here",
                               message="This Herald signs people in through single sign-on "
                                       "only: sign in with single sign-on."), 403
    if not form.validate_on_submit():
        return render_template("auth/reset_request.html", form=form), 400 if form.errors else 200
    if (wait := throttle.attempt("reset", form.email.data, _client_ip())):
        return _too_many(form, "auth/reset_request.html", wait)
    # Queued, whether or not the address has an account: the worker looks it up, so the
    # answer takes the same time either way.
    outbox.queue_reset_link(form.email.data)
    return render_template("auth/reset_sent.html", email=form.email.data)


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
        flash("Your new password is set; every other session of yours has ended.", "info")
        if two_factor.enabled(user):
            # A reset link proves the mailbox only: the second step is still asked.
            login.await_second_step(user, "")
            return redirect(url_for("auth.second_step"), 303)
        login.sign_in(user)
        return home_for_user()
    return render_template("auth/reset.html", form=form)
