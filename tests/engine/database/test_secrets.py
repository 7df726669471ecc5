import contextlib
from collections.abc import Iterator

import pytest

from engine.database import secrets
from engine.database.models import Account, Workspace
from tests.conftest import TEST_SECRET_KEY


def test_signing_secret_is_encrypted_at_rest_and_reads_back(db):
    account = Account.create(name="Acme")
    secret = secrets.new_signing_secret()
    ws = Workspace.create(account=account, name="Prod", signing_secret=secret)
    raw = db.execute_sql(
        "SELECT signing_secret FROM workspace WHERE name = 'Prod'"
    ).fetchone()[0]
    assert secret not in raw
    assert raw.startswith("enc:v1:")
    assert Workspace.get_by_id(ws.id).signing_secret == secret


@contextlib.contextmanager
def another_key() -> Iterator[None]:
    """The process configured with another HERALD_SECRET_KEY, then the test key again."""
    secrets.configure("another-key-entirely-0123456789abcdef")
    try:
        yield
    finally:
        secrets.configure(TEST_SECRET_KEY)


def test_decrypt_with_another_key_fails_clearly(db):
    token = secrets.encrypt("hello")
    with another_key(), pytest.raises(ValueError, match="cannot be decrypted"):
        secrets.decrypt(token)


def test_a_secret_read_once_is_not_readable_under_another_key(db):
    token = secrets.encrypt("hello")
    assert secrets.decrypt(token) == "hello"  # now remembered by this process
    with another_key(), pytest.raises(ValueError, match="cannot be decrypted"):
        secrets.decrypt(token)
    assert secrets.decrypt(token) == "hello"


@pytest.mark.parametrize("salt, info", [(b"herald-at-rest", b"herald secrets v1"),
                                        (b"herald-recipients", b"herald recipient hash v1")])
def test_keys_are_derived_as_cryptographys_hkdf_derives_them(salt, info):
    # The keys are derived with the standard library's HMAC (no cryptography at start):
    # they must stay the bytes cryptography's HKDF gave, or every sealed value and every
    # recipient hash stored before would no longer match.
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    key = TEST_SECRET_KEY.encode("utf-8")
    expected = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(key)
    assert secrets.hkdf_sha256(key, salt, info) == expected


def test_a_value_sealed_before_still_opens(settings):
    # Sealed with the Fernet key cryptography's HKDF derived from the test key.
    import base64

    from cryptography.fernet import Fernet
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"herald-at-rest",
                   info=b"herald secrets v1").derive(TEST_SECRET_KEY.encode("utf-8"))
    sealed = "enc:v1:" + Fernet(base64.urlsafe_b64encode(derived)).encrypt(b"old").decode()
    assert secrets.decrypt(sealed) == "old"
