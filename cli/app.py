"""The application factory: one Flask app with the API (api/) and the web application (web/)
side by side, neither knowing of the other.

It lives in cli/, the one layer above both (setup.cfg's import contract): `herald serve`
runs it, and wsgi.py calls it for a deployment under another WSGI server.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Collection
from itertools import chain
from types import MethodType
from typing import Any

from flask import Flask, Request, Response
from flask.globals import _cv_app, _cv_request
from flask.signals import request_tearing_down
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import MapAdapter

import api.app
import web
from api.direct_routes import DirectRoutes
from config.redaction import install_log_masking
from config.settings import Settings, load_settings
from engine import runtime
from engine.plugins.manager import check_providers

# URL adapters kept at most (``HeraldFlask.create_url_adapter``).
MAX_ADAPTERS = 1000
_UNSET: Any = object()


class HeraldRequest(Request):
    """Flask's request, its size limit read from the application without the
    ``current_app`` proxy: each read through a proxy first fails the ordinary way, an
    AttributeError built and dropped, twice a request."""

    @property
    def max_content_length(self) -> int | None:
        if self._max_content_length is not None:
            return self._max_content_length
        ctx = _cv_app.get(None)
        if ctx is None:
            return Request.max_content_length.fget(self)  # type: ignore[attr-defined]
        return ctx.app.config["MAX_CONTENT_LENGTH"]  # type: ignore[no-any-return]

    @max_content_length.setter
    def max_content_length(self, value: int | None) -> None:
        self._max_content_length = value


class HeraldFlask(Flask):
    """Flask, with the answer to "is this hook a coroutine?" kept per function (Flask asks
    it of every hook and view at every request), the URL map's binding kept per request
    environment (``create_url_adapter``), and the web application's app-wide hooks left out
    of the API's requests (``skip_hooks``)."""

    request_class = HeraldRequest
    _synchronous: dict[Any, bool]
    # The blueprints whose requests skip ``_skipped`` (app-wide hooks), and the app-wide
    # before and after lists without them, made at the first such request: Flask refuses a
    # new hook once a request has been served.
    _lean_blueprints: frozenset[str] = frozenset()
    _skipped: frozenset[Callable] = frozenset()
    _lean_hooks: tuple[list[Callable], list[Callable]] | None = None

    def create_url_adapter(self, request: Request | None) -> MapAdapter | None:
        # Flask binds the URL map to each request anew (the host read and checked twice,
        # IDNA-encoded, a new adapter). An adapter changes nothing once made, so requests
        # whose environments agree in every field the binding reads share one. Settings
        # under which the binding reads more (a server name, trusted hosts, host or
        # subdomain matching) bind each request as Flask does.
        if request is None or self.config["TRUSTED_HOSTS"] is not None \
                or self.config["SERVER_NAME"] is not None or self.url_map.host_matching \
                or self.subdomain_matching:
            return super().create_url_adapter(request)
        env = request.environ
        key = (env["wsgi.url_scheme"], env.get("HTTP_HOST"), env.get("SERVER_NAME"),
               env.get("SERVER_PORT"), env.get("HTTP_CONNECTION"), env.get("HTTP_UPGRADE"),
               env.get("SCRIPT_NAME"), env.get("PATH_INFO"), env.get("REQUEST_METHOD"),
               env.get("QUERY_STRING"))
        adapters = self.__dict__.setdefault("_adapters", {})
        kept = adapters.get(key)
        if kept is None:
            adapter = super().create_url_adapter(request)
            if len(adapters) >= MAX_ADAPTERS:
                adapters.clear()  # every path and query of a busy site would fill it
            kept = adapters[key] = (request.host, adapter)
        else:
            request.host = kept[0]  # what Flask's binding sets on the request
        return kept[1]

    def dispatch_request(self) -> Any:
        # Flask's own, with the request read from its context, not through the proxy.
        req = _cv_request.get().request
        if req.routing_exception is not None:
            self.raise_routing_exception(req)
        rule = req.url_rule
        if getattr(rule, "provide_automatic_options", False) and req.method == "OPTIONS":
            return self.make_default_options_response()
        return self.ensure_sync(self.view_functions[rule.endpoint])(  # type: ignore[union-attr]
            **req.view_args)  # type: ignore[arg-type]

    def do_teardown_request(self, exc: BaseException | None = _UNSET) -> None:
        # Flask's own, with the request read from its context, not through the proxy.
        if exc is _UNSET:
            exc = sys.exc_info()[1]
        for name in chain(_cv_request.get().request.blueprints, (None,)):
            if name in self.teardown_request_funcs:
                for func in reversed(self.teardown_request_funcs[name]):
                    self.ensure_sync(func)(exc)
        request_tearing_down.send(self, _async_wrapper=self.ensure_sync, exc=exc)

    def skip_hooks(self, hooks: Collection[Callable], blueprints: Collection[str]) -> None:
        """Leave the app-wide ``hooks`` out of the requests routed to ``blueprints``."""
        self._lean_blueprints = frozenset(blueprints)
        self._skipped = frozenset(hooks)
        self._lean_hooks = None

    def _lean(self) -> tuple[list[Callable], list[Callable]]:
        lean = self._lean_hooks
        if lean is None:
            lean = self._lean_hooks = (
                [f for f in self.before_request_funcs.get(None, ()) if f not in self._skipped],
                [f for f in self.after_request_funcs.get(None, ()) if f not in self._skipped])
        return lean

    def preprocess_request(self) -> Any:
        # Flask's own, with the app-wide list of before_request hooks chosen by blueprint.
        request = _cv_request.get().request
        if request.blueprint not in self._lean_blueprints:
            return super().preprocess_request()
        names = (None, *reversed(request.blueprints))
        for name in names:
            for url_func in self.url_value_preprocessors.get(name, ()):
                url_func(request.endpoint, request.view_args)
        for name in names:
            funcs = self._lean()[0] if name is None else self.before_request_funcs.get(name, ())
            for before_func in funcs:
                rv = self.ensure_sync(before_func)()
                if rv is not None:
                    return rv
        return None

    def process_response(self, response: Response) -> Response:
        # Flask's own, with the app-wide list of after_request hooks chosen by blueprint.
        ctx = _cv_request.get()
        request = ctx.request
        if request.blueprint not in self._lean_blueprints:
            return super().process_response(response)
        for func in ctx._after_request_functions:
            response = self.ensure_sync(func)(response)
        for name in chain(request.blueprints, (None,)):
            funcs = self._lean()[1] if name is None else self.after_request_funcs.get(name, ())
            for func in reversed(funcs):
                response = self.ensure_sync(func)(response)
        if not self.session_interface.is_null_session(ctx._session):
            self.session_interface.save_session(self, ctx._session, response)
        return response

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
    # The send and the preview, most of an API host's requests, answered before Flask's
    # request cycle (api/direct_routes.py); inside ProxyFix, which gives them the client.
    app.wsgi_app = DirectRoutes(app, app.wsgi_app)  # type: ignore[method-assign]
    if settings.trusted_proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]
    api.app.init_app(app, settings)
    before, after = app_wide_hooks(app)
    web.init_app(app, settings)
    # The web application's app-wide hooks (its own, flask-wtf's, flask-login's) guard its
    # pages: a request to the API's operations never reaches any of them.
    web_before, web_after = app_wide_hooks(app)
    app.skip_hooks([f for f in web_before if f not in before]
                   + [f for f in web_after if f not in after], api.app.KEYED_BLUEPRINTS)
    # Last, as always: the web application's security hooks run before these, and the
    # framing policy sees every response first.
    api.app.install_request_hooks(app)
    return app


def app_wide_hooks(app: Flask) -> tuple[list[Callable], list[Callable]]:
    """The app-wide before_request and after_request hooks installed so far."""
    return (list(app.before_request_funcs.get(None, ())),
            list(app.after_request_funcs.get(None, ())))
