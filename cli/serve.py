"""`herald serve`: the API under gunicorn, configured from our settings."""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication

from config.settings import Settings


class _Server(BaseApplication):
    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        from api.app import create_app

        return create_app()


def serve(settings: Settings, host: str, port: int, workers: int) -> None:
    """Run gunicorn in the foreground; each worker builds its own app (and DB pool)."""
    options = {
        "bind": f"{host}:{port}",
        "workers": max(1, workers),
        "worker_class": "gthread",
        "threads": 4,
        "timeout": 30,
        "graceful_timeout": 20,
        "accesslog": "-",
        "loglevel": "info",
        # Bodies over 10 MB are refused by the app before it reads them; gunicorn's own
        # limit stays off so that the answer is the spec's bare 413, not a 400.
        "limit_request_line": 8190,
    }
    _Server(options).run()
