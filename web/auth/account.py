"""The person's own account: a new password by email, two-factor sign-in, and their
sessions, each of which they may end."""

from __future__ import annotations

import re

from flask import abort, flash, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required

from engine.people import factors, outbox, passkeys, sessions, two_factor
from engine.people.errors import PeopleError
from web import login
from web.auth.forms import CodeForm, TurnOffTwoFactorForm
from web.auth.views import blueprint

_BROWSERS = (("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"),
             ("Chrome/", "Chrome"), ("Chromium/", "Chromium"), ("Safari/", "Safari"))
_SYSTEMS = (("Android", "Android"), ("iPhone", "iOS"), ("iPad", "iPadOS"),
            ("Windows", "Windows"), ("Mac OS X", "macOS"), ("CrOS", "ChromeOS"),
            ("Linux", "Linux"))


def browser_of(user_agent: str | None) -> str:
    """"Firefox on Linux": enough for a person to tell their sessions apart."""
    text = user_agent or ""
    browser = next((name for mark, name in _BROWSERS if mark in text), None)
    system = next((name for mark, name in _SYSTEMS if mark in text), None)
    if browser and system:
        return f"{browser} on {system}"
    return browser or system or (re.sub(r"\s+", " ", text)[:60] or "Unknown browser")


def _page(status: int = 200, **context):
    user = current_user.user
    token = login.current_token()
    rows = [(row, sessions.is_current(row, token)) for row in sessions.live_of(user)]
    enabled = two_factor.enabled(user)
    secret = None if enabled else two_factor.pending_secret(user)
    qr = otpauth = None
    if secret:
        otpauth = two_factor.provisioning_uri(user, secret)
        qr = two_factor.qr_svg(otpauth)
    context.setdefault("form", CodeForm(formdata=None))
    context.setdefault("off_form", TurnOffTwoFactorForm(formdata=None))
    return render_template(
        "auth/account.html", sessions=rows, browser_of=browser_of, two_factor_on=enabled,
        codes_left=two_factor.recovery_codes_left(user) if enabled else 0,
        secret=secret, qr=qr, otpauth=otpauth, passkeys=passkeys.of(user), **context), status


@blueprint.get("/account")
@login_required
def account():
    return _page()


@blueprint.post("/account")
@login_required
def reset_link():
    outbox.queue_reset_link(current_user.email)
    flash(f"We are sending a link to set a new password to {current_user.email}.", "info")
    return redirect(url_for("auth.account"))


@blueprint.post("/account/two-factor")
@login_required
def set_up_two_factor():
    try:
        two_factor.begin(current_user.user)
    except PeopleError as err:
        flash(err.message, "error")
    return redirect(url_for("auth.account") + "#two-factor", 303)


@blueprint.post("/account/two-factor/confirm")
@login_required
def turn_on_two_factor():
    form = CodeForm()
    if not form.validate_on_submit():
        return _page(400, form=form)
    user = current_user.user
    try:
        codes = two_factor.confirm(user, form.code.data or "")
    except PeopleError as err:
        form.code.errors = [err.message]
        return _page(400 if err.field else 409, form=form)
    # Every other session was signed in without the second step: they end now.
    token = login.current_token()
    for row in sessions.live_of(user):
        if not sessions.is_current(row, token):
            sessions.end_other(user, row.token_hash, token)
    session[login.SECOND_STEP] = True
    flash("Two-factor authentication is on. Every other session of yours has ended.", "info")
    return _page(recovery_codes="\n".join(codes))


@blueprint.post("/account/two-factor/recovery-codes")
@login_required
def regenerate_recovery_codes():
    """New recovery codes, shown once; the old ones stop working at once."""
    try:
        codes = two_factor.new_recovery_codes(current_user.user)
    except PeopleError as err:
        flash(err.message, "error")
        return redirect(url_for("auth.account") + "#two-factor", 303)
    flash("New recovery codes: the old ones no longer work.", "info")
    return _page(recovery_codes="\n".join(codes))


@blueprint.post("/account/two-factor/off")
@login_required
def turn_off_two_factor():
    form = TurnOffTwoFactorForm()
    try:
        # Where a workspace requires two-factor, the last second factor stays.
        factors.check_removable(current_user.user, app=True)
        two_factor.turn_off_by_owner(current_user.user, form.password.data or "",
                                     form.code.data or "")
    except PeopleError as err:
        getattr(form, err.field or "code").errors = [err.message]
        return _page(400, off_form=form)
    flash("Two-factor authentication is off: signing in asks for your password only.", "info")
    return redirect(url_for("auth.account") + "#two-factor", 303)


@blueprint.post("/account/sessions/end-others")
@login_required
def end_other_sessions():
    ended = sessions.end_all_others(current_user.user, login.current_token())
    flash(f"Signed out everywhere else: {ended} other session{'' if ended == 1 else 's'} "
          "ended." if ended else "There was no other session to end.", "info")
    return redirect(url_for("auth.account") + "#sessions", 303)


@blueprint.post("/account/sessions/end")
@login_required
def end_session():
    token_hash = request.form.get("session", "")
    if not re.fullmatch(r"[0-9a-f]{64}", token_hash):
        abort(400)
    if sessions.end_other(current_user.user, token_hash, login.current_token()):
        flash("That session has ended: it is signed out.", "info")
    else:
        flash("That session had already ended.", "info")
    return redirect(url_for("auth.account") + "#sessions", 303)
