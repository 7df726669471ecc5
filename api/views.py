"""The API's class-based views: Flask's MethodView, dispatched without its proxies.

Flask's ``as_view`` and ``MethodView.dispatch_request`` read ``current_app`` and
``request`` through werkzeug's proxies, and each such read first fails the ordinary way
(an AttributeError built and dropped): three a request. These read the same objects from
their context variables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask.globals import _cv_app, _cv_request
from flask.views import MethodView


class ApiView(MethodView):
    """A MethodView whose view function and dispatch read the application and the request
    directly; with ``decorators`` or ``init_every_request = False`` it is Flask's own."""

    @classmethod
    def as_view(cls, name: str, *class_args: Any, **class_kwargs: Any) -> Callable:
        made = super().as_view(name, *class_args, **class_kwargs)
        if cls.decorators or not cls.init_every_request:
            return made

        def view(**kwargs: Any) -> Any:
            self = cls(*class_args, **class_kwargs)
            return _cv_app.get().app.ensure_sync(self.dispatch_request)(**kwargs)

        view.__dict__.update(made.__dict__)  # view_class, methods, automatic OPTIONS
        view.__name__, view.__doc__, view.__module__ = name, made.__doc__, made.__module__
        return view

    def dispatch_request(self, **kwargs: Any) -> Any:
        method = _cv_request.get().request.method
        meth = getattr(self, method.lower(), None)
        if meth is None and method == "HEAD":
            meth = getattr(self, "get", None)
        assert meth is not None, f"Unimplemented method {method!r}"
        return _cv_app.get().app.ensure_sync(meth)(**kwargs)
