"""Error pages of the web blueprints: HTML for people, never the API's problem details."""

from __future__ import annotations

import logging

from flask import Blueprint, g, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from engine.observability.outages import RETRY_AFTER_SECONDS, dependency_of, incidents

MESSAGES = {
    400: ("Bad request", "The request could not be understood."),
    403: ("Not allowed", "Your role in this workspace does not allow this. Ask an Owner or "
                         "an Admin."),
    404: ("Page not found", "There is nothing here, or it is not in a workspace of yours."),
    405: ("Not allowed", "This page does not take that kind of request."),
    413: ("Too large", "The request is larger than Herald takes."),
    429: ("Too many attempts", "Wait a few minutes and try again."),
    503: ("Unavailable", "Try again in a moment."),
}


def page(status: int, message: str | None = None):
    title, text = MESSAGES.get(status, ("Something went wrong", "Try again in a moment."))
    return render_template("core/error.html", title=title, message=message or text,
                           status=status), status


def for_browser(error: HTTPException) -> tuple[str, int] | None:
    """The error page for a URL no route matched, when a browser asks (it prefers HTML
    to JSON); None for a client that wants JSON, which gets problem details."""
    accept = request.accept_mimetypes
    if not accept.accept_html or accept["text/html"] < accept["application/json"]:
        return None
    g.web_page = True  # the pages' headers, CSP included (web/security.py)
    return page(error.code or 500)


def register(blueprint: Blueprint) -> None:
    @blueprint.errorhandler(CSRFError)
    def csrf_refused(err: CSRFError):
        return page(400, "This form has expired or did not come from this site: go back, "
                         "reload the page and send it again.")

    @blueprint.errorhandler(HTTPException)
    def http_error(err: HTTPException):
        return page(err.code or 500)

    @blueprint.errorhandler(Exception)
    def unexpected(err: Exception):
        if (part := dependency_of(err)) is not None:
            incidents.failed(part, err)  # one log line per incident, not per page
            body, status = page(503, "Herald cannot reach its database or Redis just now. "
                                     "Try again in a moment.")
            return body, status, {"Retry-After": str(RETRY_AFTER_SECONDS)}
        logging.getLogger("herald.web").exception("unhandled error on %s", request.path)
        return page(500)
