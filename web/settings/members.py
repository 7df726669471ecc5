"""Members: invite (by email, with a role), change a role, remove a member, leave."""

from __future__ import annotations

from flask import abort, flash, g, redirect, render_template, request, url_for
from flask_login import current_user

from engine import runtime
from engine.database.models.people import Membership
from engine.formats.scripts import mixed_scripts, spelled_out
from engine.people import invitations, outbox, roles, two_factor
from engine.people.errors import PeopleError
from web.permissions import workspace_view
from web.settings.blueprint import blueprint
from web.settings.forms import InviteForm, mark
from web.settings.pages import settings_page


def _page(form: InviteForm | None = None, link: str | None = None, status: int = 200,
          problem: str | None = None):
    members = roles.members(g.workspace)
    owners = sum(1 for m in members if m.role == "owner")
    return render_template(
        "settings/members.html", page="Members", form=form or InviteForm(formdata=None),
        members=members, pending=invitations.pending(g.workspace),
        # The only Owner can be neither demoted nor leave: offer neither.
        last_owner=owners == 1,
        invitation_link=link, problem=problem, labels=roles.LABELS,
        two_factor_required=two_factor.required_in(g.workspace.id)), status


def lookalike_warning(address: str) -> str | None:
    """What to say beside an address that mixes scripts (a Cyrillic o, U+043E, before
    `wner@`), which would otherwise read as the address it imitates."""
    scripts = mixed_scripts(address)
    if not scripts:
        return None
    return (f"This address mixes {' and '.join(scripts)} letters, so it may only look like "
            f"an address you know. Spelled out: {spelled_out(address)}")


blueprint.add_app_template_filter(lookalike_warning, "lookalike_warning")


@blueprint.get("/members")
@settings_page("members")
def members():
    return _page()


@blueprint.post("/members")
@workspace_view("admin")
def invite_member():
    """The page reads the same whether or not the address has an account (nothing happens
    to an account until its person signs in and accepts); the mail goes from the queue, and
    the link is shown on the page only outside production."""
    form = InviteForm()
    try:
        issued = invitations.invite(g.workspace, form.email.data or "", form.role.data or "",
                                    current_user.user, g.role, runtime.settings().public_url)
    except PeopleError as err:
        mark(getattr(form, err.field or "email"), err.message)
        return _page(form, status=400 if err.status != 403 else 403)
    outbox.queue_invitation(str(issued.invitation.id), issued.url, current_user.name)
    flash(f"We are emailing an invitation to {issued.invitation.email}.", "info")
    if warning := lookalike_warning(issued.invitation.email):
        flash(f"Check the address: {warning}", "warning")
    return _page(link=None if runtime.settings().production else issued.url)


@blueprint.post("/members/two-factor")
@workspace_view("owner")
def require_two_factor():
    on = request.form.get("required") == "on"
    two_factor.require(g.workspace, on, current_user.user)
    flash("Every member now signs in with two-factor authentication; members without it "
          "are asked to set it up." if on else
          "Two-factor authentication is now each member's own choice.", "info")
    return redirect(url_for("settings.members", workspace_id=g.workspace.id))


def _membership(membership_id) -> Membership:
    found = roles.membership_by_id(g.workspace, membership_id)
    if found is None:
        abort(404)
    return found


@blueprint.post("/members/<uuid:membership_id>/role")
@workspace_view("owner")
def change_role(membership_id):
    target = _membership(membership_id)
    try:
        roles.change_role(target, request.form.get("role", ""), current_user.user)
    except PeopleError as err:
        return _page(status=err.status, problem=err.message)
    flash(f"{target.user.email} is now {roles.LABELS[target.role]}.", "info")
    return redirect(url_for("settings.members", workspace_id=g.workspace.id))


@blueprint.get("/members/<uuid:membership_id>/remove")
@workspace_view("member")
def confirm_remove(membership_id):
    target = _membership(membership_id)
    if target.user_id != current_user.user.id and g.role != "owner":
        abort(403)
    return render_template("settings/member_remove.html", page="Members", target=target,
                           leaving=target.user_id == current_user.user.id)


@blueprint.post("/members/<uuid:membership_id>/remove")
@workspace_view("member")
def remove_member(membership_id):
    target = _membership(membership_id)
    leaving = target.user_id == current_user.user.id
    if not leaving and g.role != "owner":
        abort(403)  # only an Owner removes others; anyone may leave
    try:
        roles.remove(target, current_user.user)
    except PeopleError as err:
        return _page(status=err.status, problem=err.message)
    if leaving:
        flash(f"You have left {g.workspace.name}.", "info")
        return redirect(url_for("core.workspaces"))
    flash(f"{target.user.email} is no longer a member.", "info")
    return redirect(url_for("settings.members", workspace_id=g.workspace.id))


@blueprint.post("/invitations/<uuid:invitation_id>/cancel")
@workspace_view("admin")
def cancel_invitation(invitation_id):
    invitation = invitations.find(g.workspace, invitation_id)
    if invitation is None:
        abort(404)
    invitations.cancel(invitation, current_user.user)
    flash(f"The invitation to {invitation.email} is cancelled.", "info")
    return redirect(url_for("settings.members", workspace_id=g.workspace.id))
