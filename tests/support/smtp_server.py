"""A real SMTP server (aiosmtpd) that advertises DSN, PIPELINING and SMTPUTF8, records what
arrives and can refuse."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP

DSN_PARAMS = ("RET", "ENVID", "NOTIFY", "ORCPT")


@dataclass
class Arrived:
    mail_from: str
    rcpt_tos: list[str]
    content: bytes
    mail_options: list[str]
    rcpt_options: list[str]
    at: float = field(default_factory=time.monotonic)  # when it arrived (the bench's rates)


@dataclass
class Handler:
    received: list[Arrived] = field(default_factory=list)
    refuse: dict[str, str] = field(default_factory=dict)  # address -> reply (MAIL or RCPT)
    delay: float = 0.0
    pipelining: bool = True  # advertise PIPELINING (RFC 2920) in the EHLO answer
    smtputf8: bool = True  # advertise SMTPUTF8 (RFC 6531)
    # Each chunk read from a client socket, when a list is given (the pipelining tests).
    reads: list[bytes] | None = None
    # Client connections open now: once a killed client's are closed here, nothing it sent
    # can still arrive (a closed session's DATA still waiting on ``delay`` is cancelled).
    open_sessions: int = 0

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        session.host_name = hostname
        offered = ["250-DSN", *(["250-PIPELINING"] if self.pipelining else [])]
        kept = [r for r in responses[:-1] if self.smtputf8 or r != "250-SMTPUTF8"]
        return [*kept, *offered, responses[-1]]

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        if address.lower() in self.refuse:
            return self.refuse[address.lower()]
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower() in self.refuse:
            return self.refuse[address.lower()]
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.delay:
            await asyncio.sleep(self.delay)
        self.received.append(Arrived(envelope.mail_from, list(envelope.rcpt_tos),
                                     envelope.original_content or envelope.content,
                                     list(envelope.mail_options),
                                     list(envelope.rcpt_options)))
        return "250 Message accepted"


class DsnSMTP(SMTP):
    """aiosmtpd refuses unknown ESMTP parameters; accept the DSN ones (RFC 3461)."""

    def connection_made(self, transport):
        if self.transport is None:  # not STARTTLS's second call for the same connection
            self.event_handler.open_sessions += 1
        super().connection_made(transport)

    def connection_lost(self, error):
        super().connection_lost(error)  # cancels the session's handler: nothing more arrives
        self.event_handler.open_sessions -= 1

    def data_received(self, data):
        # Commands that arrive in one read were pipelined: the tests check it here.
        if self.event_handler.reads is not None:
            self.event_handler.reads.append(bytes(data))
        super().data_received(data)

    def _getparams(self, params):
        result = super()._getparams(params)
        if result is not None:
            for name in DSN_PARAMS:
                result.pop(name, None)
        return result


class DsnController(Controller):
    def factory(self):
        return DsnSMTP(self.handler, **self.SMTP_kwargs)


def start_smtp(port: int, *, starttls=None, implicit_tls=None,
               auth: tuple[str, str] | None = None) -> tuple[DsnController, Handler]:
    """``starttls``: an SSLContext offered (and required) through STARTTLS;
    ``implicit_tls``: an SSLContext wrapping the socket from the first byte (smtps)."""
    handler = Handler()
    kwargs: dict = {"enable_SMTPUTF8": True}
    if starttls is not None:
        kwargs.update(tls_context=starttls, require_starttls=True)
    if auth is not None:
        def check(server, session, envelope, mechanism, data):
            from aiosmtpd.smtp import AuthResult

            ok = (data.login.decode(), data.password.decode()) == auth
            return AuthResult(success=ok)

        # With implicit TLS aiosmtpd does not know the socket is encrypted: only ask it to
        # require TLS before AUTH in the STARTTLS case, where it can tell.
        kwargs.update(authenticator=check, auth_required=True,
                      auth_require_tls=starttls is not None)
    controller = DsnController(handler, hostname="127.0.0.1", port=port, decode_data=False,
                               ssl_context=implicit_tls, server_hostname="localhost", **kwargs)
    controller.start()
    return controller, handler
