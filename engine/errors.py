"""The one error type a client can see: an errorCode of spec section 7 with its status."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ApiError(Exception):
    """Raised anywhere on the request path; api/problems.py turns it into problem details."""

    status: int
    error_code: str | None
    detail: str
    errors: dict[str, list[str]] | None = None
    error_codes: list[str] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.status} {self.error_code}: {self.detail}"


VALIDATION_FAILED = "notifications.validation_failed"


class FieldErrors:
    """Collects every broken rule so that one 400 reports them all (D2, docs/api.md)."""

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}
        self.codes: list[str] = []

    def add(self, path: str, code: str, message: str) -> None:
        self.errors.setdefault(path, []).append(message)
        if code not in self.codes:
            self.codes.append(code)

    def __bool__(self) -> bool:
        return bool(self.errors)

    def raise_if_any(self) -> None:
        if self.errors:
            raise ApiError(400, VALIDATION_FAILED, "One or more fields are invalid.",
                           errors=self.errors, error_codes=self.codes)


class UndecryptableSecret(ValueError):
    """A stored secret the configured HERALD_SECRET_KEY cannot open (not the key that sealed it).

    Its own type so that `herald` can report it as the configuration error it is.
    """
