"""`herald serve`: the API under gunicorn, configured from our settings."""

from __future__ import annotations

import ipaddress
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from gunicorn.app.base import BaseApplication

from cli import http_gateway
from config.settings import DEV_SECRET_KEY, Settings, provider_scheme_of, provider_urls
from engine.long_lived import freeze_loaded_objects


class GunicornServer(BaseApplication):
    """gunicorn driven from Python, so `herald serve` and the benchmarks share one config."""

    def __init__(self, options: dict[str, Any], loader: Callable[[], Any]) -> None:
        self.options = options
        self.loader = loader
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        # gunicorn's request closes when the app refuses it with its body unread
        # (cli/http_gateway.py); the pre_request of gunicorn_options notes the request.
        return http_gateway.CloseUnread(self.loader())


def _quit_once(worker: Any) -> None:
    """A gthread worker quits on the first SIGINT or SIGQUIT and ignores the ones after it.

    Ctrl-C signals the whole process group, so a worker gets SIGINT from the terminal and
    then SIGQUIT from its master; gunicorn's handler for the second, run while the first is
    still shutting the thread pool down, waits for a lock the first holds, and the worker
    hangs for good, keeping the port (found by tests/e2e/test_herald_dev.py).
    """
    first = worker.handle_quit
    quitting = False

    def handle_quit(sig: int, frame: FrameType | None) -> None:
        nonlocal quitting
        if not quitting:
            quitting = True
            first(sig, frame)

    signal.signal(signal.SIGQUIT, handle_quit)
    signal.signal(signal.SIGINT, handle_quit)


# How long a thread running Python keeps the interpreter lock while another asks for it
# (CPython's default is 5 ms). /healthz's answer takes the lock a few times on the
# worker's main thread (cli/health_worker.py) while up to two renders and body reads
# compete for it: each handover within 1 ms, not 5. The renders pay a few more switches.
SWITCH_INTERVAL_SECONDS = 0.001


def _worker_ready(worker: Any) -> None:
    """gunicorn's post_worker_init, the app loaded: quit once; answer gunicorn's own errors
    as problems; hand the interpreter lock over sooner; the loaded app kept out of the
    garbage collector's full walks (engine/long_lived.py)."""
    _quit_once(worker)
    http_gateway.install()
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    freeze_loaded_objects()


def gunicorn_options(host: str, port: int, workers: int, access_log: bool = True) -> dict:
    return {
        "bind": f"{host}:{port}",
        "workers": max(1, workers),
        # gthread, with /healthz answered on the accepting thread, never queued behind
        # the request threads' pool.
        "worker_class": "cli.health_worker.HealthFirstWorker",
        "threads": 4,
        "timeout": 30,
        "graceful_timeout": 20,
        "keepalive": 5,
        "accesslog": "-" if access_log else None,
        "loglevel": "info",
        "post_worker_init": _worker_ready,
        "pre_request": http_gateway.pre_request,
        # gunicorn's control socket (gunicornc, since 25.1) defaults to one path per user:
        # every `herald serve` on a host would share it and unlink each other's.
        "control_socket_disable": True,
        "logger_class": "cli.gunicorn_logs.HeraldLogger",
        "child_exit": _child_exit,
    }


def _child_exit(server: Any, worker: Any) -> None:
    """A gunicorn worker ended: its live metrics files are merged (engine/observability)."""
    from engine.observability.metrics_registry import process_ended

    process_ended(worker.pid)


def _create_app():
    from cli.app import create_app

    return create_app()


def exposure(settings: Settings, host: str) -> str | None:
    """Why serving ``settings`` on ``host`` would hand every tenant's mail or links to the
    network, or None. Outside production, the development secret key signs tracking and
    unsubscribe tokens anyone can forge, and the dev inbox shows every tenant's mail
    unauthenticated: fine on loopback, never on an address others reach."""
    if settings.production or _loopback(host):
        return None
    if settings.secret_key == DEV_SECRET_KEY:
        return ("the built-in development secret key would sign its links (anyone could forge "
                "them): set HERALD_SECRET_KEY, and HERALD_ENV=production for a deployment")
    inbox = [s for s, p in (("HERALD_EMAIL_PROVIDER", settings.email_provider),
                            ("HERALD_SMS_PROVIDER", settings.sms_provider))
             if any(provider_scheme_of(url) == "inbox" for url in provider_urls(p))]
    if inbox:
        return (f"the dev inbox ({', '.join(inbox)} is inbox://) would show every tenant's "
                "mail to anyone: set a real provider, and HERALD_ENV=production for a "
                "deployment")
    return None


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(settings: Settings, host: str, port: int, workers: int) -> None:
    """Run gunicorn in the foreground; each worker builds its own app (and DB pool)."""
    GunicornServer(gunicorn_options(host, port, workers), _create_app).run()
