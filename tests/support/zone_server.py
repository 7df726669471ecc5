"""A DNS server on loopback (dnslib's DNSServer) answering from a zone the test edits.

``zone.add("hd1._domainkey.acme.example", "CNAME", "hd1.x.dkim.test")`` publishes a record;
``zone.misbehave(name, "servfail" | "silent" | "garbage")`` makes questions about a name
fail as a broken server would. A CNAME is followed inside the zone for other types, as a
recursive resolver does, so dkimpy can read a key through a customer's CNAME.
"""

from __future__ import annotations

import threading

from dnslib import CNAME, QTYPE, RCODE, RR, TXT, A, DNSRecord
from dnslib.server import DNSHandler, DNSLogger, DNSServer


def _key(name: str) -> str:
    return str(name).rstrip(".").lower()


def _txt(value: str) -> TXT:
    raw = value.encode("utf-8")
    return TXT([raw[i:i + 255] for i in range(0, len(raw), 255)] or [b""])


class _Resolver:
    def __init__(self, zone: ZoneServer) -> None:
        self.zone = zone

    def resolve(self, request: DNSRecord, handler: DNSHandler) -> DNSRecord:
        reply = request.reply()
        name = _key(request.q.qname)
        qtype = QTYPE[request.q.qtype]
        if self.zone.behaviour.get(name) == "servfail":
            reply.header.rcode = RCODE.SERVFAIL
            return reply
        if not self.zone.answer(reply, name, qtype, depth=0) and not any(
                key[0] == name for key in self.zone.records):
            reply.header.rcode = RCODE.NXDOMAIN
        return reply


class _Handler(DNSHandler):
    def handle(self) -> None:
        data = self.request[0] if isinstance(self.request, tuple) else b""
        try:
            name = _key(DNSRecord.parse(data).q.qname)
        except Exception:
            name = ""
        behaviour = self.server.resolver.zone.behaviour.get(name)
        self.server.resolver.zone.asked.append(name)
        if behaviour == "silent":
            return
        if behaviour == "garbage":
            self.request[1].sendto(data[:2] + b"\x81\x80\xff\xff garbage", self.client_address)
            return
        super().handle()


class ZoneServer:
    def __init__(self) -> None:
        self.records: dict[tuple[str, str], list[str]] = {}
        self.behaviour: dict[str, str] = {}
        self.asked: list[str] = []
        self._lock = threading.Lock()
        self.server = DNSServer(_Resolver(self), address="127.0.0.1", port=0,
                                handler=_Handler, logger=DNSLogger("-request,-reply,-recv,"
                                                                   "-send,-error,-truncated,"
                                                                   "-data", prefix=False))
        self.port = self.server.server.server_address[1]
        self.server.start_thread()

    @property
    def nameserver(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)

    def add(self, name: str, rtype: str, value: str) -> None:
        with self._lock:
            self.records.setdefault((_key(name), rtype), []).append(value)

    def remove(self, name: str, rtype: str | None = None) -> None:
        with self._lock:
            for key in [k for k in self.records if k[0] == _key(name)
                        and rtype in (None, k[1])]:
                del self.records[key]

    def misbehave(self, name: str, how: str) -> None:
        self.behaviour[_key(name)] = how

    def answer(self, reply: DNSRecord, name: str, qtype: str, depth: int) -> bool:
        with self._lock:
            values = list(self.records.get((name, qtype), []))
            alias = list(self.records.get((name, "CNAME"), []))
        for value in values:
            rdata = {"CNAME": lambda v: CNAME(v), "TXT": _txt, "A": lambda v: A(v)}[qtype](value)
            reply.add_answer(RR(name, getattr(QTYPE, qtype), rdata=rdata, ttl=60))
        if values:
            return True
        if alias and depth < 8:
            reply.add_answer(RR(name, QTYPE.CNAME, rdata=CNAME(alias[0]), ttl=60))
            self.answer(reply, _key(alias[0]), qtype, depth + 1)
            return True
        return False

    def close(self) -> None:
        self.server.stop()
        self.server.server.server_close()
