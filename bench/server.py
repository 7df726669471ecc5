"""Run a WSGI app under the exact gunicorn configuration of `herald serve` (no access log)."""

from __future__ import annotations

import importlib
import sys

from cli.serve import GunicornServer, gunicorn_options


def main() -> None:
    target, port, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    module, _, attr = target.partition(":")

    def load():
        obj = getattr(importlib.import_module(module), attr)
        return obj() if attr.startswith("create_") else obj

    GunicornServer(gunicorn_options("127.0.0.1", port, workers, access_log=False), load).run()


if __name__ == "__main__":
    main()
