"""The web application (docs/web.md): server-rendered pages over the engine's services,
registered beside the API by the app factory (cli/app.py) so that one process serves both."""

from __future__ import annotations

from flask import Flask

from config.settings import Settings
from web import login, security

# The Account page's and the passkeys' views, on auth's blueprint.
from web.auth import account, passkeys, single_sign_on  # noqa: F401
from web.auth.views import blueprint as auth
from web.authoring import blueprint as authoring
from web.authoring.frames import blueprint as preview_frames
from web.core.errors import for_browser
from web.core.views import blueprint as core
from web.preferences import blueprint as preferences
from web.reports.views import blueprint as reports
from web.settings import blueprint as settings_pages
from web.workspace.views import blueprint as workspace


def init_app(app: Flask, settings: Settings) -> None:
    """Sessions, CSRF, security headers and every blueprint of the web application."""
    security.init_app(app, settings)
    login.init_app(app)
    for blueprint in (core, auth, workspace, reports, settings_pages, authoring,
                      preview_frames, preferences):
        app.register_blueprint(blueprint)
    # The API answers unrouted URLs; a browser's gets this page instead (api/app.py).
    app.extensions["herald.html_error"] = for_browser
