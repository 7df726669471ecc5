"""One message through an ordered list of providers: the rule failover follows, shared by
deliveries (engine/delivery/failover.py, with a circuit breaker) and the web application's
own mail (engine/people/mail.py, without one).

A connection failure, a timeout or an answer the provider marks temporary (a
TransientError, or an OSError a plugin lets out) moves the message to the next provider at
once; a permanent answer (a hard bounce, refused content, refused credentials) ends there:
another provider would only say the same about the recipient, or hide a misconfiguration.

The result or error that leaves ``send_in_order`` carries ``delivered_via`` (the label of
the provider that took the message), ``provider_scheme`` (the scheme of the last provider
that answered) and ``providers_tried`` (each provider in order with its outcome).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from engine.plugins.contracts import (
    DeliveryError,
    PermanentError,
    Provider,
    SendResult,
    SuppressedError,
    TransientError,
)


def label(plugin: str | None, url: str) -> str:
    """How a provider is named where people read it: its scheme, host and port, never its
    credentials, path or options (``smtp://mx1.example:587``, ``inbox://``)."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{plugin or parts.scheme}://{parts.hostname or ''}{port}"


@dataclass(frozen=True)
class Candidate:
    """One provider of the list, and the key its gate knows it by."""

    label: str
    provider: Provider
    key: str = ""


class Gate(Protocol):
    """Which candidates may be tried now, told how each try went (a circuit breaker)."""

    def admit(self, key: str) -> Any: ...  # with ``allowed`` and ``wait`` (seconds)

    def failed(self, key: str) -> None: ...

    def succeeded(self, key: str, admission: Any) -> None: ...


def _tried(candidate: Candidate, outcome: str, error: BaseException | None) -> dict[str, Any]:
    return {"provider": candidate.label, "outcome": outcome,
            "error": str(error)[:500] if error is not None else None}


def _outcome_of(err: DeliveryError) -> str:
    if isinstance(err, SuppressedError):
        return "suppressed"
    return "permanent" if isinstance(err, PermanentError) else "transient"


def send_in_order(candidates: Sequence[Candidate], message: Any,
                  gate: Gate | None = None) -> SendResult:
    """The first provider that takes ``message``; raises the DeliveryError that ended it."""
    tried: list[dict[str, Any]] = []
    last: DeliveryError | None = None
    answered: Candidate | None = None
    waits: list[float] = []
    for candidate in candidates:
        admission = gate.admit(candidate.key) if gate is not None else None
        if admission is not None and not admission.allowed:
            tried.append({"provider": candidate.label, "outcome": "skipped",
                          "error": "circuit open"})
            waits.append(admission.wait)
            continue
        answered = candidate
        try:
            result = candidate.provider.send(message)
        except (TransientError, OSError) as err:
            if gate is not None:
                gate.failed(candidate.key)
            tried.append(_tried(candidate, "transient", err))
            last = err if isinstance(err, TransientError) else TransientError(
                f"{type(err).__name__}: {err}")
            continue
        except DeliveryError as err:  # the provider answered: it is up
            if gate is not None:
                gate.succeeded(candidate.key, admission)
            tried.append(_tried(candidate, _outcome_of(err), err))
            raise _annotated(err, candidate, False, tried) from None
        if gate is not None:
            gate.succeeded(candidate.key, admission)
        tried.append(_tried(candidate, "delivered", None))
        return _annotated(result, candidate, True, tried)
    if last is None:  # every provider skipped: try again when the first may be probed
        last = TransientError("every provider is skipped while its circuit is open",
                              retry_after=min(waits) if waits else None)
    raise _annotated(last, answered, False, tried) from None


def _annotated(value: Any, candidate: Candidate | None, delivered: bool,
               tried: list[dict[str, Any]]) -> Any:
    value.delivered_via = candidate.label if delivered and candidate else None
    value.provider_scheme = candidate.label.partition("://")[0] if candidate else None
    value.providers_tried = tried
    return value
