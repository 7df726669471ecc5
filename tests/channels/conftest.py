from __future__ import annotations

import pytest
import trustme

from tests.support.dns_server import LoopbackDns
from tests.support.https_receiver import HttpsReceiver

PUBLIC = "93.184.215.14"  # resolution only: nothing ever connects to it


@pytest.fixture(scope="session")
def ca():
    return trustme.CA()


@pytest.fixture(scope="session")
def ca_file(ca, tmp_path_factory):
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture
def receiver(ca):
    server = HttpsReceiver(ca)
    yield server
    server.close()


@pytest.fixture(scope="session")
def dns_server():
    server = LoopbackDns({
        "hook.test": {"A": ["127.0.0.1"]},
        "down.test": {"fail": True},
        "slow.test": {"silent": True},
        "other.test": {"A": ["127.0.0.1"]},
        "public.test": {"A": [PUBLIC]},
        "v6only.test": {"AAAA": ["2606:2800:220:1:248:1893:25c8:1946"]},
        "mixed.test": {"A": [PUBLIC, "10.0.0.5"]},
        "mixed6.test": {"A": [PUBLIC], "AAAA": ["fd00::1"]},
        "alias.test": {"CNAME": "internal.test."},
        "internal.test": {"A": ["192.168.1.10"]},
        "metadata.test": {"A": ["169.254.169.254"]},
        "cgnat.test": {"A": ["100.64.0.1"]},
        "nat64.test": {"AAAA": ["64:ff9b::a00:1"]},
        "mapped.test": {"AAAA": ["::ffff:127.0.0.1"]},
        "loop.test": {"A": ["127.0.0.1"]},
    })
    yield server
    server.close()
