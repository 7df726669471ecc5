"""A DNS server on loopback answering crafted records, for the destination policy tests."""

from __future__ import annotations

import socket
import threading

import dns.message
import dns.rcode
import dns.resolver
import dns.rrset


class LoopbackDns:
    """records: name -> {"A": [...], "AAAA": [...], "CNAME": "target."}, or {"fail": True}
    (answered SERVFAIL) or {"silent": True} (never answered); other names NXDOMAIN."""

    def __init__(self, records: dict[str, dict]) -> None:
        self.records = {k.rstrip(".").lower(): v for k, v in records.items()}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def resolver(self) -> dns.resolver.Resolver:
        resolver = dns.resolver.Resolver(configure=False)
        resolver.nameservers = ["127.0.0.1"]
        resolver.port = self.port
        resolver.timeout = resolver.lifetime = 2.0
        return resolver

    def _answer(self, response: dns.message.Message, name: str, rdtype: str) -> bool:
        entry = self.records.get(name.rstrip(".").lower())
        if entry is None:
            return False
        if "CNAME" in entry:
            target = entry["CNAME"]
            response.answer.append(dns.rrset.from_text(name, 60, "IN", "CNAME", target))
            self._answer(response, target, rdtype)
            return True
        for value in entry.get(rdtype, []):
            response.answer.append(dns.rrset.from_text(name, 60, "IN", rdtype, value))
        return True

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                data, peer = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            query = dns.message.from_wire(data)
            response = dns.message.make_response(query)
            question = query.question[0]
            rdtype = dns.rdatatype.to_text(question.rdtype)
            entry = self.records.get(question.name.to_text().rstrip(".").lower(), {})
            if entry.get("silent"):
                continue
            if entry.get("fail"):
                response.set_rcode(dns.rcode.SERVFAIL)
            elif not self._answer(response, question.name.to_text(), rdtype):
                response.set_rcode(dns.rcode.NXDOMAIN)
            self.sock.sendto(response.to_wire(), peer)

    def close(self) -> None:
        self._stop = True
        self.thread.join(timeout=2)
        self.sock.close()
