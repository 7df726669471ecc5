"""Spec 6.1: no destination reaches a private address, however it is written."""

from __future__ import annotations

import pytest

from engine.webhooks.destinations import DestinationError, check_destination, is_forbidden_address
from tests.conftest import PUBLIC

HOSTILE = [
    # scheme, port, userinfo, characters
    "http://public.test/x", "ftp://public.test/x", "//public.test/x", "public.test/x",
    "https://public.test:8443/x", "https://public.test:80/x", "https://public.test:0/x",
    "https://public.test:99999/x", "https://user@public.test/x", "https://u:p@public.test/x",
    "https://public.test@10.0.0.1/x", "https://10.0.0.1#@public.test/x",
    "https://public.test\\@10.0.0.1/x", "https://public.test /x", "https://public.test/\tx",
    "https://public.test/x\r\nHost: evil", "https://pub\x00lic.test/", "https:///x",
    "https://", "", "https://ex\u00e4mple.test/", "https://[::1/x", "https://public.test:443:443/",
    # loopback, private and other special IPv4 ranges, in many notations
    "https://127.0.0.1/", "https://127.1/", "https://0x7f000001/", "https://2130706433/",
    "https://017700000001/", "https://0x7f.0.0.1/", "https://0177.0.0.1/", "https://127.0.1/",
    "https://0.0.0.0/", "https://0/", "https://10.0.0.1/", "https://10.255.255.255/",
    "https://172.16.0.1/", "https://172.31.255.254/", "https://192.168.0.1/",
    "https://169.254.169.254/", "https://100.64.0.1/", "https://100.127.255.254/",
    "https://192.0.0.8/", "https://192.0.2.1/", "https://192.88.99.1/", "https://198.18.0.1/",
    "https://198.19.255.1/", "https://198.51.100.7/", "https://203.0.113.9/",
    "https://224.0.0.1/", "https://239.255.255.250/", "https://240.0.0.1/",
    "https://255.255.255.255/", "https://0xa9.0xfe.0xa9.0xfe/", "https://3232235521/",
    # IPv6
    "https://[::]/", "https://[::1]/", "https://[0:0:0:0:0:0:0:1]/", "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:7f00:1]/", "https://[::ffff:10.0.0.1]/", "https://[::127.0.0.1]/",
    "https://[::10.0.0.1]/", "https://[64:ff9b::a00:1]/", "https://[64:ff9b::7f00:1]/",
    "https://[64:ff9b:1::1]/", "https://[2002:7f00:1::]/", "https://[2002:c0a8:101::1]/",
    "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "https://[fc00::1]/", "https://[fd12::1]/",
    "https://[fec0::1]/", "https://[fe80::1]/", "https://[fe80::1%25eth0]/", "https://[ff02::1]/",
    "https://[5f00::1]/", "https://[2001:db8::1]/", "https://[100::1]/",
    # names that resolve to private addresses
    "https://localhost/", "https://mixed.test/", "https://mixed6.test/", "https://alias.test/",
    "https://internal.test/", "https://metadata.test/", "https://cgnat.test/",
    "https://nat64.test/", "https://mapped.test/", "https://loop.test/", "https://nxdomain.test/",
    "https://intranet/", "https://0x7f.1/",
]


def test_the_corpus_is_large_enough():
    assert len(HOSTILE) >= 60


@pytest.mark.parametrize("url", HOSTILE)
def test_hostile_destination_is_refused(url, dns_server):
    with pytest.raises(DestinationError):
        check_destination(url, resolver=dns_server.resolver())


@pytest.mark.parametrize("url", ["https://public.test/hook", "https://public.test:443/a?b=c",
                                 "https://v6only.test/x", "https://93.184.215.14/x",
                                 "https://PUBLIC.test/x"])
def test_public_destination_passes(url, dns_server):
    checked = check_destination(url, resolver=dns_server.resolver())
    assert checked.port == 443
    assert all(not is_forbidden_address(a) for a in checked.addresses)


def test_every_answer_is_judged_not_only_the_first(dns_server):
    with pytest.raises(DestinationError, match=r"10\.0\.0\.5"):
        check_destination("https://mixed.test/", resolver=dns_server.resolver())


def test_private_mode_allows_loopback_on_any_port_but_nothing_else(dns_server):
    checked = check_destination("https://hook.test:8443/x", allow_private=True,
                                resolver=dns_server.resolver())
    assert checked.addresses == ("127.0.0.1",)
    for url in ("https://internal.test/", "https://10.0.0.1:8443/", "http://10.0.0.1/",
                "http://public.test/", "https://public.test:8443/", "ftp://localhost/"):
        with pytest.raises(DestinationError):
            check_destination(url, allow_private=True, resolver=dns_server.resolver())


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/dev/inbox/webhooks/demo",
                                 "http://localhost/hook", "http://[::1]:9000/x",
                                 "http://hook.test:8080/x"])
def test_private_mode_allows_plain_http_to_loopback(url, dns_server):
    checked = check_destination(url, allow_private=True, resolver=dns_server.resolver())
    assert checked.scheme == "http"
    assert all(a in ("127.0.0.1", "::1") for a in checked.addresses)


@pytest.mark.parametrize(("url", "rule"), [
    ("http://127.0.0.1:8000/dev/inbox/webhooks/demo", "rule: https:// only"),
    ("https://127.0.0.1:8443/hook", "rule: port 443 only"),
    ("https://localhost/hook", "rule: public addresses only"),
    ("https://hook.test/hook", "rule: public addresses only"),
])
def test_production_refuses_local_receivers_naming_the_rule_and_never_the_setting(
        url, rule, dns_server):
    with pytest.raises(DestinationError) as refused:
        check_destination(url, resolver=dns_server.resolver())
    assert rule in str(refused.value) and "spec 6.1" in str(refused.value)
    assert "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS" not in str(refused.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/x", "https://127.0.0.1:8443/x",
                                 "https://localhost/x", "https://hook.test/x"])
def test_outside_production_a_refusal_the_setting_lifts_names_it(url, dns_server):
    with pytest.raises(DestinationError,
                       match="set HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true"):
        check_destination(url, resolver=dns_server.resolver(), hint=True)


@pytest.mark.parametrize("url", ["https://internal.test/", "https://user@public.test/",
                                 "http://public.test/x"])
def test_a_refusal_the_setting_cannot_lift_does_not_name_it(url, dns_server):
    for allow_private in (False, True):
        with pytest.raises(DestinationError) as refused:
            check_destination(url, resolver=dns_server.resolver(), hint=True,
                              allow_private=allow_private)
        assert "rule" in str(refused.value)
        if allow_private or "http://" not in url:
            assert "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true" not in str(refused.value)


def test_a_name_is_resolved_and_judged_again_at_every_check(dns_server):
    url = "https://rebind.test/hook"
    dns_server.records["rebind.test"] = {"A": [PUBLIC]}
    try:
        checked = check_destination(url, resolver=dns_server.resolver())
        assert checked.addresses == (PUBLIC,)
        dns_server.records["rebind.test"] = {"A": ["10.1.2.3"]}  # the name now points inside
        with pytest.raises(DestinationError, match="non-public"):
            check_destination(url, resolver=dns_server.resolver())
    finally:
        del dns_server.records["rebind.test"]
