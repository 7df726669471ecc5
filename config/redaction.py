"""Masking secrets out of text bound for a log or a terminal.

Kept here (config imports nothing of ours) so settings errors, the CLI and the log record
factory share one rule: a URL's password and a path's live token never reach a log.
"""

from __future__ import annotations

import logging
import re

MASK = "***"
# scheme://user:password@host -- the password up to the last '@' before the host.
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^\s:/@'\"]*:)[^\s'\"]*@", re.I)
# password=..., secret=..., token=... in a query string or a key=value message.
_PARAMETER = re.compile(r"(?P<head>\b(?:sentinel_password|password|passwd|pwd|secret|token"
                        r"|api_key|apikey)=)[^\s&'\"]+", re.I)
# Paths whose last segment is a live capability: tracking, unsubscribe, invitation, reset.
_TOKEN_PATH = re.compile(r"(?P<head>/(?:t/[ocu]|invitations|reset)/)[^\s?#'\"/]+")


# A placeholder in a usage hint (twilio://ACCOUNT_SID:AUTH_TOKEN@) is no secret: kept.
_PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*@")


def _masked_password(match: re.Match[str]) -> str:
    password = match.group(0)[len(match.group("head")):]
    return match.group(0) if _PLACEHOLDER.fullmatch(password) else f"{match['head']}{MASK}@"


_AUTHORITY = re.compile(r"^(?P<head>\s*[A-Za-z][A-Za-z0-9+.-]*://)(?P<rest>.*)$", re.S)


def mask_url(url: str) -> str:
    """A URL as an error may quote it: everything between the user's ``:`` (else
    ``scheme://``) and the last ``@`` becomes ``***``, whatever characters the password
    holds. Made by structure, not by a pattern of allowed characters, so none escapes."""
    match = _AUTHORITY.match(url)
    if match is None:
        return mask_secrets(url)
    rest = match["rest"]
    at = rest.rfind("@")
    if at >= 0:
        # The user stays when a password follows it; a lone user part may be a token.
        user, colon, _ = rest[:at].partition(":")
        rest = f"{user}:{MASK}@{rest[at + 1:]}" if colon else f"{MASK}@{rest[at + 1:]}"
    return mask_secrets(match["head"] + rest)


def mask_secrets(text: str) -> str:
    """``text`` with URL passwords, secret parameters and capability tokens replaced."""
    if "/" not in text and "=" not in text:
        return text  # each pattern needs "://", "=" or "/": most log lines hold none
    text = _URL_PASSWORD.sub(_masked_password, text)
    text = _PARAMETER.sub(rf"\g<head>{MASK}", text)
    return _TOKEN_PATH.sub(rf"\g<head>{MASK}", text)


def install_log_masking() -> None:
    """Every log record, from any logger (gunicorn's access log included), is masked once
    as it is made: its message, and its traceback, which can quote a connection URL."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "herald_masking", False):
        return

    def factory(*args, **kwargs) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: let the handler report it as logging does
            return record
        masked = mask_secrets(message)
        if masked != message:
            record.msg, record.args = masked, ()
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = mask_secrets(logging.Formatter().formatException(record.exc_info))
        return record

    factory.herald_masking = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)
