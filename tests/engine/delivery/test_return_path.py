import uuid

from engine.delivery.return_path import envelope_sender, notification_of


def test_envelope_sender_names_its_notification(settings):
    nid = str(uuid.uuid4())
    address = envelope_sender(nid, "RP.Acme.Example.")
    assert address.endswith("@rp.acme.example")
    assert notification_of(address) == nid
    assert notification_of(f"<{address.upper()}>") == nid


def test_forged_or_foreign_addresses_name_nothing(settings):
    nid = uuid.uuid4().hex
    forged = f"bounces+{nid}-aaaaaaaaaa@rp.acme.example"
    assert notification_of(forged) is None
    assert notification_of("postmaster@rp.acme.example") is None
    other = envelope_sender(str(uuid.uuid4()), "rp.acme.example")
    tampered = other.replace(other[8:40], nid)
    assert notification_of(tampered) is None
