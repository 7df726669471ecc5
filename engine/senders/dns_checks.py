"""Check a domain's records against what was issued: the exact type at the exact host.

Each record gets a status and an honest reason: ``missing`` (no such name, or no record of
that type), ``points elsewhere`` (and where), ``doubled host`` (published at
``hd1._domainkey.acme.example.acme.example``: a DNS panel that appends the zone was given
the whole name), or ``try again`` when the resolver could not answer (a timeout, SERVFAIL,
an answer that does not parse): that is never a failure of the record.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.dns_resolver import dns_package

if TYPE_CHECKING:
    import dns.resolver

# Status of a record after a check.
VERIFIED, FAILED, PENDING = "verified", "failed", "pending"
TRY_AGAIN = "try again"


@dataclass(frozen=True)
class Answer:
    """One lookup: ``values`` when found, ``absent`` (no name, no record of the type), or
    ``trouble`` saying why no answer could be had."""

    values: tuple[str, ...] = ()
    absent: str | None = None
    trouble: str | None = None


def lookup(resolver: dns.resolver.Resolver, host: str, rdtype: str) -> Answer:
    """Ask for exactly ``rdtype`` at ``host`` (a CNAME question is not followed)."""
    dns = dns_package()  # imported with the resolver (engine/dns_resolver.py)
    try:
        answer = resolver.resolve(host + ".", rdtype, search=False, raise_on_no_answer=True)
    except dns.resolver.NXDOMAIN:
        return Answer(absent=f"{host} does not exist in DNS")
    except dns.resolver.NoAnswer:
        return Answer(absent=f"{host} has no {rdtype} record")
    except dns.resolver.LifetimeTimeout:
        return Answer(trouble="the DNS server did not answer in time")
    except dns.resolver.NoNameservers:
        return Answer(trouble="the DNS server failed to answer (SERVFAIL or an unreadable "
                              "answer)")
    except dns.exception.DNSException as err:
        return Answer(trouble=f"the DNS lookup failed ({type(err).__name__})")
    except Exception as err:  # a server's garbage must never become a failed record
        return Answer(trouble=f"the DNS answer could not be read ({type(err).__name__})")
    if rdtype == "TXT":
        values = tuple(b"".join(r.strings).decode("utf-8", "replace") for r in answer)
    else:
        values = tuple(r.to_text().rstrip(".").lower() for r in answer)
    return Answer(values=values)


def _dmarc(values: tuple[str, ...]) -> bool:
    return any(v.strip().lower().startswith("v=dmarc1") for v in values)


def _matches(record: dict[str, Any], values: tuple[str, ...]) -> bool:
    if record["purpose"] == "dmarc":
        return _dmarc(values)
    return record["value"].rstrip(".").lower() in values


def _absent_reason(record: dict[str, Any], why: str) -> str:
    advisory = (" (advisory: DMARC does not block verification)"
                if record["purpose"] == "dmarc" else "")
    return f"missing: {why}; publish {record['type']} {record['host']} " \
           f"{record['value']}{advisory}"


def judge(record: dict[str, Any], domain: str,
          resolver: dns.resolver.Resolver) -> tuple[str, str | None]:
    """(status, reason) of one issued record, from what DNS says now."""
    found = lookup(resolver, record["host"], record["type"])
    if found.trouble:
        return PENDING, f"{TRY_AGAIN}: {found.trouble}"
    if found.values:
        if _matches(record, found.values):
            return VERIFIED, None
        if record["purpose"] == "dmarc":
            return FAILED, _absent_reason(record, f"{record['host']} has no v=DMARC1 record")
        return FAILED, (f"points elsewhere: {record['host']} points to "
                        f"{', '.join(found.values)}, not to {record['value']}")
    doubled = f"{record['host']}.{domain}"
    if len(doubled) <= 253:
        again = lookup(resolver, doubled, record["type"])
        if again.values:
            relative = record["host"][: -len(domain) - 1]
            return FAILED, (f"doubled host: the record was published at {doubled}; your DNS "
                            f"panel adds the domain itself, so enter the host as {relative}")
    return FAILED, _absent_reason(record, found.absent or "no record")


def check_records(records: list[dict[str, Any]], domain: str,
                  resolver: dns.resolver.Resolver) -> list[dict[str, Any]]:
    """Every record judged at once (each lookup is bounded, so the whole check is too)."""
    with ThreadPoolExecutor(max_workers=len(records) or 1,
                            thread_name_prefix="herald-dns") as pool:
        verdicts = list(pool.map(lambda r: judge(r, domain, resolver), records))
    return [{**record, "status": status, "reason": reason}
            for record, (status, reason) in zip(records, verdicts, strict=True)]
