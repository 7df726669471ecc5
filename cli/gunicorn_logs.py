"""gunicorn's logs in Herald's format: the access line with its correlation id and timing
as fields, and gunicorn's own lines, text or JSON as HERALD_LOG_FORMAT says."""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

from engine.observability.log_format import configure_logging, current_format, formatter

ACCESS_MESSAGE = "%s %s %s %.0f ms"


class HeraldLogger(Logger):
    """gunicorn's Logger with Herald's formatter on its handlers and a structured access
    line (its path masked like every record: config/redaction.py)."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        configure_logging(current_format())  # chosen by `herald serve`
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(formatter())

    def access(self, resp: Any, req: Any, environ: dict, request_time: Any) -> None:
        if not self.access_log_enabled:
            return
        headers = {name.lower(): value for name, value in (resp.headers or [])}
        status = str(resp.status).split(" ", 1)[0]
        path = environ.get("RAW_URI") or environ.get("PATH_INFO", "")
        millis = request_time.total_seconds() * 1000
        method = environ.get("REQUEST_METHOD", "-")
        self.access_log.info(ACCESS_MESSAGE, method, path, status, millis, extra={
            "method": method, "path": path, "status": int(status) if status.isdigit() else status,
            "durationMs": round(millis, 1), "bytes": getattr(resp, "sent", None),
            "remote": environ.get("REMOTE_ADDR"),
            "correlationId": headers.get("x-correlation-id") or None})
