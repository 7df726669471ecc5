"""`Sign in with single sign-on` (OpenID Connect): the redirect to the provider, the
answer's return, and the end of the provider's session at sign-out (RP-initiated logout)
where its metadata offers one. The protocol is engine/people/single_sign_on.py's, who the
person is engine/people/sso_accounts.py's."""

from __future__ import annotations

import time

from flask import abort, g, redirect, render_template, request, session

from engine import runtime
from engine.people import single_sign_on, sso_accounts, two_factor
from engine.people.errors import PeopleError
from web import login
from web.auth.views import _safe_next, blueprint
from web.core.views import home_for_user

PENDING = "herald_sso_pending"
PENDING_SECONDS = 600
# RFC 8176: the provider says it used more than one factor.
MFA_METHODS = frozenset({"mfa", "hwk", "swk", "otp", "sms", "fpt", "face", "iris"})


def _callback_url() -> str:
    return runtime.settings().public_url.rstrip("/") + "/sign-in/sso/callback"


@blueprint.before_app_request
def allow_provider() -> None:
    """The provider's origins join this page's form-action (web/security.py)."""
    if single_sign_on.configured():
        g.form_action = single_sign_on.origins()


@blueprint.app_context_processor
def sign_in_ways() -> dict[str, bool]:
    settings = runtime.settings()
    return {"sso_on": single_sign_on.configured(),
            "sso_only": single_sign_on.configured() and settings.oidc_only}


@blueprint.post("/sign-in/sso")
def start_single_sign_on():
    if not single_sign_on.configured():
        abort(404)
    try:
        started = single_sign_on.begin(_callback_url())
    except PeopleError as err:
        return _refused(err)
    session[PENDING] = {**started.pending, "at": time.time(),
                        "next": _safe_next(request.args.get("next", ""))}
    return redirect(started.url, 303)


def _refused(err: PeopleError, email: str | None = None):
    return render_template("auth/sso_refused.html", message=err.message, email=email), \
        err.status


@blueprint.get("/sign-in/sso/callback")
def single_sign_on_callback():
    if not single_sign_on.configured():
        abort(404)
    pending = session.pop(PENDING, None)
    if isinstance(pending, dict) and time.time() - float(pending.get("at", 0)) > \
            PENDING_SECONDS:
        pending = None
    try:
        claims, id_token = single_sign_on.finish(pending, request.args.to_dict(),
                                                 _callback_url())
        user = sso_accounts.person_for(claims)
    except sso_accounts.NoAccount as err:
        return _refused(err, err.email)
    except PeopleError as err:
        return _refused(err)
    target = str((pending or {}).get("next") or "")
    methods = claims.get("amr") if isinstance(claims.get("amr"), list) else []
    if MFA_METHODS.intersection(str(m) for m in methods):
        login.sign_in(user, second_step=True)
    elif two_factor.enabled(user):
        # The provider did not say it asked for a second factor: Herald asks its own.
        login.await_second_step(user, target)
        return redirect("/sign-in/code", 303)
    else:
        login.sign_in(user)
    session[login.SSO_ID_TOKEN] = id_token
    return redirect(target) if target else home_for_user()
