"""One permission decorator per view, as GOV.UK Notify's admin does it: the signed-in user
must be a member of the workspace in the URL (else 404, as if it did not exist) with at
least the role the view needs (else 403)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import abort, flash, g, redirect, session, url_for
from flask_login import current_user, login_required

from engine.people import roles, two_factor
from web import login


def workspace_view(role: str = "member") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Load ``g.workspace`` and ``g.role`` from the URL's ``workspace_id`` and check them."""
    if role not in roles.RANK:
        raise ValueError(f"unknown role {role!r}")

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(view)
        @login_required
        def checked(workspace_id: Any, **kwargs: Any) -> Any:
            known, membership = login.membership_read(workspace_id)
            if not known:
                membership = roles.membership_in(workspace_id, current_user.user)
            if membership is None:
                abort(404)
            if not roles.at_least(membership.role, role):
                abort(403)
            workspace = membership.workspace
            if not session.get(login.SECOND_STEP) and two_factor.required_in(workspace_id):
                # The Owner requires two-factor sign-in: the member is led to set it up.
                flash(f"{workspace.name} requires two-factor authentication: set it up here. "
                      "If it is on already, sign out and sign in again with your code "
                      "or a passkey.",
                      "error")
                return redirect(url_for("auth.account") + "#two-factor")
            g.workspace, g.membership, g.role = workspace, membership, membership.role
            return view(**kwargs)

        return checked

    return decorate


def can(role: str) -> bool:
    """For templates: may the signed-in member of ``g.workspace`` do what ``role`` may?"""
    return roles.at_least(g.get("role", ""), role)
