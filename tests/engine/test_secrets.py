import pytest

from engine import secrets
from engine.models import Account, Workspace


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


def test_decrypt_with_another_key_fails_clearly(db):
    token = secrets.encrypt("hello")
    secrets.configure("another-key-entirely-0123456789abcdef")
    try:
        with pytest.raises(ValueError, match="cannot be decrypted"):
            secrets.decrypt(token)
    finally:
        from tests.conftest import TEST_SECRET_KEY

        secrets.configure(TEST_SECRET_KEY)


def test_a_secret_read_once_is_not_readable_under_another_key(db):
    token = secrets.encrypt("hello")
    assert secrets.decrypt(token) == "hello"  # now remembered by this process
    secrets.configure("another-key-entirely-0123456789abcdef")
    try:
        with pytest.raises(ValueError, match="cannot be decrypted"):
            secrets.decrypt(token)
    finally:
        from tests.conftest import TEST_SECRET_KEY

        secrets.configure(TEST_SECRET_KEY)
    assert secrets.decrypt(token) == "hello"
