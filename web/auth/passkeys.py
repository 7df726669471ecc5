"""Passkeys in the browser: added and removed on the Account page, used by `Sign in with a
passkey` on the sign-in page. The ceremonies are JSON requests made by
web/static/passkeys.js (a page's own script file: the CSP allows no inline script); the
checks are engine/people/passkeys.py's."""

from __future__ import annotations

from typing import Any

from flask import flash, jsonify, make_response, redirect, request, session, url_for
from flask_login import current_user, login_required

from engine.formats import json_limits
from engine.people import passkeys, sessions
from engine.people.errors import PeopleError
from web import login
from web.auth.views import _safe_next, blueprint
from web.core.views import home_for_user

REGISTERING = "herald_passkey_register"
SIGNING_IN = "herald_passkey_sign_in"


def _body() -> dict[str, Any]:
    try:
        data = json_limits.loads(request.get_data(cache=True) or b"{}")
    except (json_limits.StructureRefused, ValueError):
        data = None
    if not isinstance(data, dict):
        raise PeopleError("The request could not be read.")
    return data


def _refused(err: PeopleError):
    return jsonify({"error": err.message, "field": err.field}), err.status


def _json_text(json_text: str):
    """The ceremony's options as the library wrote them: JSON, never cached."""
    response = make_response(json_text)
    response.mimetype = "application/json"
    response.headers["Cache-Control"] = "no-store"
    return response


@blueprint.post("/account/passkeys/options")
@login_required
def passkey_registration_options():
    ceremony, options = passkeys.registration_options(current_user.user)
    session[REGISTERING] = ceremony
    return _json_text(options)


@blueprint.post("/account/passkeys")
@login_required
def add_passkey():
    try:
        data = _body()
        passkey = passkeys.register(current_user.user, session.pop(REGISTERING, None),
                                    str(data.get("name") or ""), data.get("credential"))
    except PeopleError as err:
        return _refused(err)
    if not session.get(login.SECOND_STEP):
        # As when the app is turned on: this session has now shown the second factor, and
        # the others, signed in with a password alone, end.
        token = login.current_token()
        for row in sessions.live_of(current_user.user):
            if not sessions.is_current(row, token):
                sessions.end_other(current_user.user, row.token_hash, token)
        session[login.SECOND_STEP] = True
    flash(f"Passkey “{passkey.name}” added: you can sign in with it.", "info")
    return jsonify({"redirect": url_for("auth.account") + "#passkeys"})


@blueprint.post("/account/passkeys/<int:passkey_id>/remove")
@login_required
def remove_passkey(passkey_id: int):
    try:
        passkey = passkeys.remove(current_user.user, passkey_id, current_user.user)
        flash(f"Passkey “{passkey.name}” removed.", "info")
    except PeopleError as err:
        flash(err.message, "error")
    return redirect(url_for("auth.account") + "#passkeys", 303)


@blueprint.post("/sign-in/passkey/options")
def passkey_sign_in_options():
    ceremony, options = passkeys.authentication_options()
    session[SIGNING_IN] = ceremony
    return _json_text(options)


@blueprint.post("/sign-in/passkey")
def sign_in_with_passkey():
    """A passkey made and used with user verification is two factors: the session counts
    as one that passed the second step."""
    try:
        user = passkeys.authenticate(session.pop(SIGNING_IN, None), _body().get("credential"))
    except PeopleError as err:
        return _refused(err)
    target = _safe_next(request.args.get("next", ""))
    login.sign_in(user, second_step=True)
    return jsonify({"redirect": target or home_for_user().location})
