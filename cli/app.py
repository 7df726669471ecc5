"""The application factory: one Flask app with the API (api/) and the web application (web/)
side by side, neither knowing of the other.

It lives in cli/, the one layer above both (setup.cfg's import contract): `herald serve`
runs it, and wsgi.py calls it for a deployment under another WSGI server.
"""

from __future__ import annotations

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

import api.app
import web
from config.redaction import install_log_masking
from config.settings import Settings, load_settings
from engine import runtime
from engine.plugins.manager import check_providers


def create_app(settings: Settings | None = None) -> Flask:
    """The application; settings read from the environment (and their providers checked)
    unless given."""
    install_log_masking()  # wsgi.py deployments start here, not in cli.main
    if settings is None:
        settings = load_settings()
        check_providers(settings)
    runtime.configure(settings)
    app = Flask(__name__)
    if settings.trusted_proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]
    api.app.init_app(app, settings)
    web.init_app(app, settings)
    # Last, as always: the web application's security hooks run before these, and the
    # framing policy sees every response first.
    api.app.install_request_hooks(app)
    return app
