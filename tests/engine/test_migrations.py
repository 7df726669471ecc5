from engine.migrations import MIGRATIONS, current_version, upgrade
from engine.models import ALL_MODELS


def test_upgrade_creates_every_table_and_is_idempotent(db):
    assert current_version(db) == len(MIGRATIONS)
    for model in ALL_MODELS:
        assert db.table_exists(model._meta.table_name), model.__name__
    again = upgrade(db)
    assert again == {"from": len(MIGRATIONS), "to": len(MIGRATIONS)}
    assert current_version(db) == len(MIGRATIONS)
