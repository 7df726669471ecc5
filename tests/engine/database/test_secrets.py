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
