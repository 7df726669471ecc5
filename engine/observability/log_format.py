"""One line per event: readable text by default, one JSON object with HERALD_LOG_FORMAT=json.

Fields a caller passes with ``extra=`` (``outcome``, ``reason``, ``durationMs``...) and the
ids bound in engine/observability/context.py are written as fields, never folded into the
message; a traceback stays inside its line in JSON (``exception``). Every record was masked
when it was made (config/redaction.py); extras are masked here as they are written.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from config.redaction import install_log_masking, mask_secrets
from engine.observability import context
from engine.observability.outages import OutageFilter

TEXT_FORMAT = "%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"
# Every attribute a plain LogRecord has: anything else on a record came as ``extra``.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
_format = "text"


def extras(record: logging.LogRecord) -> dict[str, Any]:
    """The ids bound now, then the record's own fields (the record's win)."""
    fields: dict[str, Any] = context.current()
    for key, value in vars(record).items():
        if key not in _STANDARD and not key.startswith("_") and value is not None:
            fields[key] = value
    return fields


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return mask_secrets(str(value))


class TextFormatter(logging.Formatter):
    """``time LEVEL [pid] logger: message key=value ...``."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)
        self._second: tuple[int, str] = (-1, "")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """logging's own text, its date and time formatted once a second, not per line."""
        if datefmt:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        if self._second[0] != second:
            self._second = (second, time.strftime(self.default_time_format,
                                                  self.converter(record.created)))
        return self.default_msec_format % (self._second[1], record.msecs)

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info or record.exc_text or record.stack_info \
                or record.process.__class__ is not int:
            line = super().format(record)
        else:
            # logging's own line for TEXT_FORMAT, written directly: its %-mapping over the
            # record's attributes and the checks around it were half of a line's cost.
            record.message = message = record.getMessage()
            record.asctime = asctime = self.formatTime(record, self.datefmt)
            line = f"{asctime} {record.levelname} [{record.process}] {record.name}: {message}"
        fields = extras(record)
        if fields:
            head, sep, tail = line.partition("\n")
            pairs = " ".join(f"{k}={_clean(v)}" for k, v in fields.items())
            line = f"{head} {pairs}{sep}{tail}"
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, pid, message, then the fields."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                    + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "pid": record.process,
            "message": record.getMessage(),
        }
        document.update({k: _clean(v) for k, v in extras(record).items()})
        if record.exc_info and not record.exc_text:
            record.exc_text = mask_secrets(self.formatException(record.exc_info))
        if record.exc_text:
            document["exception"] = record.exc_text
        return json.dumps(document, ensure_ascii=False, default=str)


def formatter(fmt: str | None = None) -> logging.Formatter:
    """The formatter for ``fmt`` (default: the one configure_logging chose)."""
    return JsonFormatter() if (fmt or _format) == "json" else TextFormatter()


def current_format() -> str:
    return _format


def configure_logging(fmt: str | None = None, level: int = logging.INFO) -> None:
    """Root logging to stderr in ``fmt`` (None: the one chosen before, so a forked process
    keeps its parent's); every handler already there takes it too."""
    global _format
    fmt = _format = fmt or _format
    install_log_masking()
    # Neither format writes the thread's or the process's name, nor the caller's file and
    # line: not looked up per record (the caller's frame walk was a tenth of a log line).
    logging.logThreads = False
    logging.logMultiprocessing = False
    logging._srcfile = None  # type: ignore[attr-defined]  # the logging HOWTO's switch
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler(sys.stderr))
    root.setLevel(level)
    for handler in root.handlers:
        handler.setFormatter(formatter(fmt))
        if not any(isinstance(f, OutageFilter) for f in handler.filters):
            handler.addFilter(OutageFilter())
