"""The Email preferences page at the unsubscribe link (GET /t/u/<token>; the one-click POST
to the same URL is the API's, api/tracking.py).

Sessionless like every /t/ URL, so no CSRF token: the signed link is the credential, and a
page that could forge a POST to it would need the link already. A GET changes nothing, so
a mail client's link scanner that opens it unsubscribes no one.
"""

from __future__ import annotations

import time

from flask import Blueprint, Response, abort, redirect, render_template, request, url_for

from engine.delivery import tracking_guard
from engine.inbound import preferences

blueprint = Blueprint("preferences", __name__, template_folder="templates")


def _link(token: str) -> preferences.Link:
    verdict = tracking_guard.admit("preferences", token, request.remote_addr or "", None)
    if verdict == tracking_guard.LIMITED:
        abort(Response("Too many requests.\n", status=429, mimetype="text/plain",
                       headers={"Retry-After": str(60 - int(time.time() % 60))}))
    link = preferences.read_link(token)
    if link is None:
        abort(Response(render_template("preferences/expired.html"), status=404))
    return link


SAVED = {"all": "You are unsubscribed from all marketing email.",
         "topics": "Your preferences are saved."}


@blueprint.get("/t/u/<token>")
def page(token: str):
    link = _link(token)
    topics, everything = preferences.choices(link)
    return render_template("preferences/page.html", token=token, link=link, topics=topics,
                           everything=everything, saved=SAVED.get(request.args.get("saved", "")))


@blueprint.post("/t/u/<token>/preferences")
def save(token: str):
    link = _link(token)
    if request.form.get("action") == "all":
        preferences.unsubscribe_all(link)
        saved = "all"
    else:
        preferences.save(link, set(request.form.getlist("topic")))
        saved = "topics"
    return redirect(url_for("preferences.page", token=token, saved=saved), code=303)
