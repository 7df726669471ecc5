"""MAIL FROM and RCPT TO addresses: the fast path writes exactly what smtplib.quoteaddr does."""

from __future__ import annotations

import random
import smtplib

import pytest

from engine.formats.message_bytes import PLAIN_ADDRESS
from plugins.smtp.exchange import angle_address

ATEXT = "abcxyzABCXYZ0189!#$%&'*+/=?^_`{|}~-"
ODD = ATEXT + '.@ "<>(),;:\\[]\tüé'


@pytest.mark.parametrize("address", [
    "ada@example.net", "o'neil+tag@ex-ample.co.uk", "A@B", "!#$%&*+/=?^_`{|}~-@x",
    "a..b@x.com", ".a@x.com", "a.@x.com", "a@x..com", "a@x.", "<>", "",
    "Ada <ada@example.net>", '"quoted local"@example.net', "ada@example.net (comment)",
    " ada@example.net ", "zoë@bücher.example", "a@[127.0.0.1]",
])
def test_chosen_addresses_match_quoteaddr(address):
    assert angle_address(address) == smtplib.quoteaddr(address)


def test_random_addresses_match_quoteaddr():
    rng = random.Random(20261123)
    fast = 0
    for _ in range(5000):
        alphabet = ATEXT + "." if rng.random() < 0.7 else ODD
        local = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        domain = "".join(rng.choice("abz09-.") for _ in range(rng.randint(0, 10)))
        address = f"{local}@{domain}" if rng.random() < 0.9 else local + domain
        fast += bool(PLAIN_ADDRESS.fullmatch(address))
        assert angle_address(address) == smtplib.quoteaddr(address), address
    assert fast > 1000  # the fast path itself was compared, not only the fallback
