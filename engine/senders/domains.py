"""Sender domains: a request issues records; checks verify it; the 7-day and 72-hour rules.

A request is ``pending`` until one check finds the two DKIM CNAMEs and the return-path
CNAME as issued (DMARC is reported, never required): it is then ``verified``. A pending
request not verified within 7 days is ``expired`` (adding the domain again re-opens it,
records and keys unchanged). A verified domain whose required records a check finds gone
(missing, pointing elsewhere, or at a doubled host) stays verified for 72 hours from that
check, with a warning on the page and an email to the workspace's Owners and Admins; a
check after those 72 hours that still finds them gone makes it ``failed``: mail from it is
refused until a check finds them again. A lookup that gets no answer ("try again") neither
starts, stops nor ends that clock.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from peewee import SqliteDatabase

from engine import dns_resolver, runtime
from engine.database.db import database
from engine.database.models import Account, Sender, Workspace, utcnow
from engine.senders import allowances, dkim_keys, mail
from engine.senders.dns_checks import VERIFIED, check_records
from engine.senders.errors import SenderError
from engine.senders.names import issued_records, parse_domain, target_label

REQUEST_DAYS = 7
GRACE = dt.timedelta(hours=72)


def rfc3339(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.replace(microsecond=0).isoformat() + "Z"


def status_at(sender: Sender, now: dt.datetime | None = None) -> str:
    """The status as of ``now``: a pending request past its 7 days reads ``expired`` even
    before the hourly pass has written it."""
    if (sender.status == "pending" and sender.kind == "domain" and sender.expires_at
            and sender.expires_at <= (now or utcnow())):
        return "expired"
    return sender.status


def describe(sender: Sender, now: dt.datetime | None = None) -> dict[str, Any]:
    """``{"domain", "status", "expiresAt", "records"}`` (docs/senders.md). ``expiresAt``
    is when a pending request expires (or did), or when a verified domain whose records
    are gone stops being verified; else null."""
    status = status_at(sender, now)
    expires = None
    if status in ("pending", "expired"):
        expires = sender.expires_at
    elif status == "verified" and sender.missing_since is not None:
        expires = sender.missing_since + GRACE
    return {"domain": sender.value, "status": status, "expiresAt": rfc3339(expires),
            "records": [{key: record.get(key) for key in
                         ("purpose", "type", "host", "value", "status", "reason")}
                        for record in sender.records or []]}


def warning(sender: Sender) -> str | None:
    """The page's warning while a verified domain's records are gone."""
    if sender.status != "verified" or sender.missing_since is None:
        return None
    return (f"Some DNS records of {sender.value} are gone. Publish them again before "
            f"{rfc3339(sender.missing_since + GRACE)}, or mail from it will be refused.")


def _zones() -> tuple[str, str]:
    settings = runtime.settings()
    if not settings.dkim_zone or not settings.return_path_domain:
        raise SenderError("Sender domains need HERALD_DKIM_ZONE and HERALD_RETURN_PATH_DOMAIN "
                          "to be set by the operator (docs/senders.md).")
    return settings.dkim_zone, settings.return_path_domain


def _issue(sender: Sender, domain: str) -> None:
    dkim_zone, return_path_domain = _zones()
    sender.records = issued_records(domain, target_label(domain), dkim_zone,
                                    return_path_domain)
    sender.dkim_keys = dkim_keys.new_keys()


def find(account: Account, text: Any) -> Sender:
    domain = parse_domain(text)
    found = Sender.get_or_none(Sender.account == account, Sender.kind == "domain",
                               Sender.value == domain)
    if found is None:
        raise SenderError(f"{domain} is not a sender domain of this account.", "domain")
    return found


def add_domain(account: Account, text: Any, workspace: Workspace | None = None,
               now: dt.datetime | None = None) -> Sender:
    """Issue a domain's records, or give the request that exists (re-opened if expired)."""
    domain = parse_domain(text)
    _zones()
    now = now or utcnow()
    with database.atomic():
        allowances.lock_account(account)
        found = Sender.get_or_none(Sender.account == account, Sender.kind == "domain",
                                   Sender.value == domain)
        if found is not None and status_at(found, now) != "expired":
            if not found.records:  # declared by `herald apply`: it gets records to sign
                _issue(found, domain)
                found.save()
            return found
        allowances.check_not_taken(account, "domain", domain)
        allowances.check_allowance(account, "domain")
        sender = found or Sender(account=account, kind="domain", value=domain,
                                 declared=False, workspace=workspace, created_at=now)
        if not sender.records:
            _issue(sender, domain)
        sender.records = [{**r, "status": "pending", "reason": "not checked yet"}
                          for r in sender.records]
        sender.status, sender.verified = "pending", False
        sender.expires_at = now + dt.timedelta(days=REQUEST_DAYS)
        sender.checked_at = sender.missing_since = None
        sender.save(force_insert=found is None)
    return sender


def _set(sender: Sender, status: str, now: dt.datetime) -> None:
    sender.status, sender.verified = status, status == "verified"
    if status == "verified":
        sender.verified_at, sender.missing_since = now, None


def check_domain(sender: Sender, now: dt.datetime | None = None) -> Sender:
    """Look the records up now and apply the rules above; SenderError when every record is
    in place but another account holds the domain verified (it stays pending)."""
    now = now or utcnow()
    if sender.kind != "domain":
        raise SenderError(f"{sender.value} is not a domain.")
    if status_at(sender, now) == "expired":
        if sender.status != "expired":
            _set(sender, "expired", now)
            sender.save()
        return sender
    if not sender.records:  # declared by `herald apply`, never requested: nothing to look up
        return sender
    records = check_records(sender.records, sender.value, dns_resolver.resolver())
    with database.atomic():
        # Read again under a lock: the hourly pass and `Check now` may meet on one domain.
        sender = Sender.select().where(Sender.id == sender.id).for_update(
            not isinstance(database.obj, SqliteDatabase)).get()
        outcome = _apply_check(sender, records, now)
        sender.save()
    if outcome == "warn":  # after the commit: a slow provider holds no lock
        mail.warn_records_gone(sender, rfc3339(now + GRACE) or "")
    if outcome == "taken":
        raise SenderError(f"{sender.value} is verified by another account: it stays pending "
                          f"here until that account's verification ends.")
    return sender


def _apply_check(sender: Sender, records: list[dict[str, Any]],
                 now: dt.datetime) -> str | None:
    """Write a check's outcome on ``sender``: "taken" when another account holds the domain,
    "warn" when a verified domain's records were just found gone."""
    sender.records, sender.checked_at = records, now
    required = [r for r in records if r["purpose"] != "dmarc"]
    in_place = all(r["status"] == VERIFIED for r in required)
    gone = any(r["status"] == "failed" for r in required)
    if in_place:
        if sender.status == "verified":
            sender.missing_since = None
        else:
            try:
                allowances.check_not_taken(sender.account, "domain", sender.value)
            except SenderError:
                return "taken"
            _set(sender, "verified", now)
    elif sender.status == "verified" and gone and not sender.declared:
        if sender.missing_since is None:
            sender.missing_since = now
            return "warn"
        if now - sender.missing_since >= GRACE:
            _set(sender, "failed", now)
            sender.missing_since = None
    return None
