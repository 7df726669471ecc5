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

    # A hostile body can break a rule per element: the map keeps the first entries and says
    # how many more there were, so the answer stays small (500 k header names made 69 MB).
    MAX_ENTRIES = 100
    MORE = "..."

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}
        self.codes: list[str] = []
        self.omitted = 0

    def add(self, path: str, code: str, message: str) -> None:
        if path in self.errors:
            if len(self.errors[path]) < 10:
                self.errors[path].append(message)
        elif len(self.errors) < self.MAX_ENTRIES:
            self.errors[path] = [message]
        else:
            self.omitted += 1
        if code not in self.codes:
            self.codes.append(code)

    def __bool__(self) -> bool:
        return bool(self.errors)

    def raise_if_any(self) -> None:
        if self.errors:
            errors = dict(self.errors)
            if self.omitted:
                errors[self.MORE] = [f"and {self.omitted} more"]
            raise ApiError(400, VALIDATION_FAILED, "One or more fields are invalid.",
                           errors=errors, error_codes=self.codes)


class UndecryptableSecret(ValueError):
    """A stored secret the configured HERALD_SECRET_KEY cannot open (not the key that sealed it).

    Its own type so that `herald` can report it as the configuration error it is.
    """
