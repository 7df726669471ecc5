"""Domain requests checked against a real DNS server on loopback: every reason of issue 26."""

from __future__ import annotations

import datetime as dt

import pytest

from engine.database.models import Account, Sender, utcnow
from engine.senders.domains import add_domain, check_domain, describe
from engine.senders.errors import SenderError
from tests.engine.senders.helpers import by_purpose, publish

T0 = dt.datetime(2026, 3, 2, 9, 0, 0)


@pytest.fixture
def account(sender_settings):
    return Account.create(name="Acme", plan="pro")


def test_adding_a_domain_issues_pending_records_that_expire_in_seven_days(account):
    doc = describe(add_domain(account, "Acme.Example", now=T0), now=T0)
    assert doc["domain"] == "acme.example" and doc["status"] == "pending"
    assert doc["expiresAt"] == "2026-03-09T09:00:00Z"
    assert [r["purpose"] for r in doc["records"]] == ["dkim", "dkim", "return-path", "dmarc"]
    assert by_purpose(doc, "dkim")["value"].endswith(".dkim.herald.test")
    assert by_purpose(doc, "return-path") == {
        "purpose": "return-path", "type": "CNAME", "host": "hrp.acme.example",
        "value": "rp.herald.test", "status": "pending", "reason": "not checked yet"}
    again = describe(add_domain(account, "acme.example", now=T0), now=T0)
    assert again == doc, "adding it again gives the same request"


def test_records_in_place_verify_the_domain_and_dmarc_does_not_block(account, zone):
    sender = add_domain(account, "acme.example", now=T0)
    publish(zone, describe(sender), skip=("dmarc",))
    doc = describe(check_domain(sender, now=T0), now=T0)
    assert doc["status"] == "verified" and doc["expiresAt"] is None
    assert [r["status"] for r in doc["records"]] == ["verified"] * 3 + ["failed"]
    dmarc = by_purpose(doc, "dmarc")
    assert dmarc["reason"].startswith("missing: ")
    assert "does not block" in dmarc["reason"]
    assert Sender.get_by_id(sender.id).verified is True


def test_dmarc_published_is_reported_verified(account, zone):
    sender = add_domain(account, "acme.example")
    publish(zone, describe(sender), skip=("dmarc",))
    zone.add("_dmarc.acme.example", "TXT", "v=DMARC1; p=reject; rua=mailto:d@acme.example")
    assert by_purpose(describe(check_domain(sender)), "dmarc")["status"] == "verified"


def test_a_missing_record_is_missing_and_the_domain_stays_pending(account, zone):
    sender = add_domain(account, "acme.example")
    publish(zone, describe(sender), skip=("return-path",))
    doc = describe(check_domain(sender))
    assert doc["status"] == "pending"
    rp = by_purpose(doc, "return-path")
    assert rp["status"] == "failed"
    assert rp["reason"].startswith("missing: hrp.acme.example does not exist in DNS")


def test_a_name_without_the_record_type_is_missing_too(account, zone):
    sender = add_domain(account, "acme.example")
    zone.add("hrp.acme.example", "A", "192.0.2.10")  # an A record where the CNAME belongs
    rp = by_purpose(describe(check_domain(sender)), "return-path")
    assert rp["status"] == "failed"
    assert rp["reason"].startswith("missing: hrp.acme.example has no CNAME record")


def test_a_wrong_cname_points_elsewhere_and_says_where(account, zone):
    sender = add_domain(account, "acme.example")
    doc = describe(sender)
    publish(zone, doc)
    zone.remove("hd2._domainkey.acme.example")
    zone.add("hd2._domainkey.acme.example", "CNAME", "hd2.Other-Provider.example.")
    checked = describe(check_domain(sender))
    hd2 = by_purpose(checked, "dkim", 1)
    assert checked["status"] == "pending"
    assert hd2["status"] == "failed"
    assert hd2["reason"] == ("points elsewhere: hd2._domainkey.acme.example points to "
                             f"hd2.other-provider.example, not to {hd2['value']}")


def test_case_and_the_trailing_dot_do_not_matter(account, zone):
    sender = add_domain(account, "acme.example")
    for record in describe(sender)["records"]:
        if record["type"] == "CNAME":
            zone.add(record["host"].upper(), "CNAME", record["value"].upper() + ".")
    assert describe(check_domain(sender))["status"] == "verified"


def test_a_record_published_at_a_doubled_host_is_named_as_such(account, zone):
    sender = add_domain(account, "acme.example")
    doc = describe(sender)
    publish(zone, doc)
    hd1 = by_purpose(doc, "dkim")
    zone.remove(hd1["host"])
    zone.add(hd1["host"] + ".acme.example", "CNAME", hd1["value"])
    checked = by_purpose(describe(check_domain(sender)), "dkim")
    assert checked["status"] == "failed"
    assert checked["reason"].startswith(
        "doubled host: the record was published at "
        "hd1._domainkey.acme.example.acme.example")
    assert "enter the host as hd1._domainkey" in checked["reason"]


@pytest.fixture
def short_lookups(monkeypatch):
    """A lookup's budget of one second: a server that never answers is let go sooner."""
    from engine import dns_resolver

    monkeypatch.setattr(dns_resolver, "LOOKUP_SECONDS", 1.0)
    monkeypatch.setattr(dns_resolver, "_cached", {})


@pytest.mark.parametrize("how, words", [
    ("servfail", "try again: the DNS server failed"),
    ("garbage", "try again: "),
])
def test_a_failing_dns_server_is_try_again_never_failed(account, zone, short_lookups, how,
                                                        words):
    sender = add_domain(account, "acme.example")
    publish(zone, describe(sender))
    zone.misbehave("hrp.acme.example", how)
    doc = describe(check_domain(sender))
    rp = by_purpose(doc, "return-path")
    assert rp["status"] == "pending" and rp["reason"].startswith(words)
    assert doc["status"] == "pending"
    assert by_purpose(doc, "dkim")["status"] == "verified"


def test_a_silent_dns_server_is_try_again_after_a_bounded_wait(account, zone, short_lookups):
    sender = add_domain(account, "acme.example")
    zone.misbehave("hd1._domainkey.acme.example", "silent")
    hd1 = by_purpose(describe(check_domain(sender)), "dkim")
    assert hd1["status"] == "pending"
    assert hd1["reason"] == "try again: the DNS server did not answer in time"


def test_a_domain_verified_by_another_account_is_refused_without_naming_it(account, zone):
    other = Account.create(name="Rival Holdings", plan="pro")
    theirs = add_domain(other, "acme.example")
    publish(zone, describe(theirs))
    check_domain(theirs)
    with pytest.raises(SenderError) as caught:
        add_domain(account, "ACME.example")
    assert "another account" in str(caught.value)
    assert "Rival" not in str(caught.value) and str(other.id) not in str(caught.value)
    assert not Sender.select().where(Sender.account == account).exists()


def test_the_plan_allowance_is_enforced_with_its_limit(sender_settings):
    basic = Account.create(name="Small", plan="basic")
    add_domain(basic, "one.example")
    with pytest.raises(SenderError, match="The Basic plan allows 1 domain, and this "
                                          "account has 1"):
        add_domain(basic, "two.example")
    assert Sender.select().where(Sender.account == basic).count() == 1


def test_domains_need_the_operator_zones(settings):
    account = Account.create(name="Acme", plan="pro")
    with pytest.raises(SenderError, match="HERALD_DKIM_ZONE and HERALD_RETURN_PATH_DOMAIN"):
        add_domain(account, "acme.example")


def test_a_request_expires_after_seven_days_and_adding_it_again_reopens_it(account, zone):
    sender = add_domain(account, "acme.example", now=T0)
    first = describe(sender)
    late = T0 + dt.timedelta(days=7)
    assert describe(sender, now=late - dt.timedelta(seconds=1))["status"] == "pending"
    assert describe(sender, now=late)["status"] == "expired"
    publish(zone, first)
    expired = check_domain(sender, now=late)
    assert expired.status == "expired" and expired.verified is False
    assert zone.asked == [], "an expired request is not looked up"
    reopened = describe(add_domain(account, "acme.example", now=late), now=late)
    assert reopened["status"] == "pending"
    assert reopened["expiresAt"] == "2026-03-16T09:00:00Z"
    assert [r["value"] for r in reopened["records"]] == [r["value"] for r in first["records"]]
    assert describe(check_domain(Sender.get_by_id(sender.id), now=late))["status"] == \
        "verified"


def test_records_gone_from_a_verified_domain_warn_then_fail_after_72_hours(account, zone):
    sender = add_domain(account, "acme.example", now=T0)
    doc = describe(sender)
    publish(zone, doc)
    check_domain(sender, now=T0)
    zone.remove("hrp.acme.example")
    later = T0 + dt.timedelta(hours=5)
    warned = check_domain(Sender.get_by_id(sender.id), now=later)
    assert warned.status == "verified" and warned.missing_since == later
    assert describe(warned)["expiresAt"] == "2026-03-05T14:00:00Z"
    almost = check_domain(warned, now=later + dt.timedelta(hours=71, minutes=59))
    assert almost.status == "verified"
    gone = check_domain(almost, now=later + dt.timedelta(hours=72))
    assert gone.status == "failed" and gone.verified is False
    zone.add("hrp.acme.example", "CNAME", "rp.herald.test")
    back = check_domain(gone, now=later + dt.timedelta(hours=80))
    assert back.status == "verified" and back.missing_since is None


def test_records_back_within_72_hours_stop_the_clock(account, zone):
    sender = add_domain(account, "acme.example", now=T0)
    publish(zone, describe(sender))
    check_domain(sender, now=T0)
    zone.remove("hrp.acme.example")
    check_domain(Sender.get_by_id(sender.id), now=T0 + dt.timedelta(hours=1))
    zone.add("hrp.acme.example", "CNAME", "rp.herald.test")
    back = check_domain(Sender.get_by_id(sender.id), now=T0 + dt.timedelta(hours=2))
    assert back.missing_since is None
    zone.remove("hrp.acme.example")
    again = check_domain(back, now=T0 + dt.timedelta(hours=74))
    assert again.status == "verified", "the clock starts again from this check"
    assert again.missing_since == T0 + dt.timedelta(hours=74)


def test_an_unanswered_lookup_neither_starts_nor_ends_the_clock(account, zone):
    sender = add_domain(account, "acme.example", now=T0)
    publish(zone, describe(sender))
    check_domain(sender, now=T0)
    zone.misbehave("hrp.acme.example", "servfail")
    unsure = check_domain(Sender.get_by_id(sender.id), now=T0 + dt.timedelta(hours=100))
    assert unsure.status == "verified" and unsure.missing_since is None


def test_status_at_now_is_the_default(account):
    sender = add_domain(account, "acme.example")
    assert describe(sender)["status"] == "pending"
    assert sender.expires_at > utcnow()
