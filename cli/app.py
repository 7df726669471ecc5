"""The application factory: one Flask app with the API (api/) and the web application (web/)
side by side, neither knowing of the other.

It lives in cli/, the one layer above both (setup.cfg's import contract): `herald serve`
runs it, and wsgi.py calls it for a deployment under another WSGI server.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import MethodType
from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

import api.app
import web
from config.redaction import install_log_masking
from config.settings import Settings, load_settings
from engine import runtime
from engine.plugins.manager import check_providers


class HeraldFlask(Flask):
    """Flask, with the answer to "is this hook a coroutine?" kept per function: Flask asks
    it of every hook and view at every request (a dozen times per send)."""

    _synchronous: dict[Any, bool]

    def ensure_sync(self, func: Callable) -> Callable:
        # By the function under a bound method: a MethodView's methods are bound to a new
        # instance at every request, and would fill the dictionary.
        # (Not getattr with a default: for a plain function, the usual case, that builds and
        # drops an AttributeError, a dozen times a request.)
        plain = func.__func__ if func.__class__ is MethodType else func
        known = self.__dict__.setdefault("_synchronous", {})
        synchronous = known.get(plain)
        if synchronous is None:
            synchronous = known[plain] = not inspect.iscoroutinefunction(func)
        return func if synchronous else super().ensure_sync(func)


def create_app(settings: Settings | None = None) -> Flask:
    """The application; settings read from the environment (and their providers checked)
    unless given."""
    install_log_masking()  # wsgi.py deployments start here, not in cli.main
    if settings is None:
        settings = load_settings()
        check_providers(settings)
    runtime.configure(settings)
    app = HeraldFlask(__name__)
    if settings.trusted_proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]
    api.app.init_app(app, settings)
    web.init_app(app, settings)
    # Last, as always: the web application's security hooks run before these, and the
    # framing policy sees every response first.
    api.app.install_request_hooks(app)
    return app
