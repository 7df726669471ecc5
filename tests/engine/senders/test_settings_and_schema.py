"""HERALD_DNS_NAMESERVERS and the zones; every lookup Herald makes goes to the configured
server; migration step 6 on a sender table as steps 1 to 5 left it."""

from __future__ import annotations

import uuid

import pytest

from config.settings import ConfigError, load_settings
from engine.webhooks.destinations import DestinationError, check_destination


@pytest.mark.parametrize("raw, servers", [
    ("192.0.2.53", (("192.0.2.53", 53),)),
    ("192.0.2.53:5353, [2001:db8::53]:53,2001:db8::54", (
        ("192.0.2.53", 5353), ("2001:db8::53", 53), ("2001:db8::54", 53))),
])
def test_nameservers_are_read_as_host_and_port(raw, servers):
    assert load_settings({"HERALD_DNS_NAMESERVERS": raw}).dns_nameservers == servers


@pytest.mark.parametrize("name, raw, words", [
    ("HERALD_DNS_NAMESERVERS", "dns.example:53", "must be an IP address"),
    ("HERALD_DNS_NAMESERVERS", "192.0.2.1:0", "port must be a number"),
    ("HERALD_DNS_NAMESERVERS", "192.0.2.1:x", "port must be a number"),
    ("HERALD_DNS_NAMESERVERS", " , ", "host[:port]"),
    ("HERALD_DKIM_ZONE", "dkim", "a DNS name"),
    ("HERALD_DKIM_ZONE", "dkim..example", "a DNS name"),
    ("HERALD_RETURN_PATH_DOMAIN", "https://rp.example", "a DNS name"),
    ("HERALD_RETURN_PATH_DOMAIN", ("a" * 60 + ".") * 3 + "example", "at most 180"),
])
def test_bad_sender_settings_name_the_variable(name, raw, words):
    with pytest.raises(ConfigError) as caught:
        load_settings({name: raw})
    assert caught.value.setting == name and words in str(caught.value)


def test_zones_are_kept_lower_case_without_the_trailing_dot():
    settings = load_settings({"HERALD_DKIM_ZONE": "DKIM.Herald.Example.",
                              "HERALD_RETURN_PATH_DOMAIN": "rp.herald.example"})
    assert (settings.dkim_zone, settings.return_path_domain) == (
        "dkim.herald.example", "rp.herald.example")


def test_the_webhook_destination_check_asks_the_configured_server(sender_settings, zone):
    zone.add("hooks.customer.example", "A", "93.184.216.34")
    zone.add("inside.customer.example", "A", "10.0.0.7")
    checked = check_destination("https://hooks.customer.example/in")
    assert checked.addresses == ("93.184.216.34",)
    with pytest.raises(DestinationError, match="non-public address"):
        check_destination("https://inside.customer.example/in")
    assert "hooks.customer.example" in zone.asked


ACCOUNT = uuid.uuid4().hex


def test_step_6_adds_the_flow_to_a_sender_table_of_before(tmp_path):
    """Rows `apply` wrote before stay verified and declared; a Unicode domain takes its
    ASCII form (an ASCII twin already there wins)."""
    from peewee import SqliteDatabase

    from engine.database.db import database
    from engine.database.migrations import _sender_verification
    from engine.database.models import Account, Sender

    old = SqliteDatabase(str(tmp_path / "old.sqlite3"))
    previous = database.obj
    database.initialize(old)
    try:
        old.execute_sql('CREATE TABLE "account" ("id" TEXT PRIMARY KEY, "name" TEXT, '
                        '"plan" TEXT, "monthly_limit" INTEGER, "webhook_delivery" INTEGER, '
                        '"created_at" DATETIME)')
        old.execute_sql('CREATE TABLE "workspace" ("id" TEXT PRIMARY KEY)')
        old.execute_sql('CREATE TABLE "sender" ("id" TEXT PRIMARY KEY, "account_id" TEXT '
                        'NOT NULL REFERENCES "account" ("id") ON DELETE CASCADE, "kind" '
                        'VARCHAR(10) NOT NULL, "value" VARCHAR(320) NOT NULL, "verified" '
                        'INTEGER NOT NULL, "created_at" DATETIME NOT NULL)')
        old.execute_sql("INSERT INTO account VALUES (?, 'Acme', 'pro', NULL, 0, "
                        "'2026-01-01 00:00:00')", (ACCOUNT,))
        for kind, value in (("domain", "bücher.example"), ("domain", "acme.example"),
                            ("address", "ops@straße.example"),
                            ("domain", "xn--caf-dma.example"), ("domain", "café.example")):
            old.execute_sql("INSERT INTO sender VALUES (?, ?, ?, ?, 1, "
                            "'2026-01-01 00:00:00')", (uuid.uuid4().hex, ACCOUNT, kind, value))
        _sender_verification(old)
        rows = {(r.kind, r.value, r.status, r.declared, r.verified)
                for r in Sender.select().where(Sender.account == ACCOUNT)}
        assert Account.select().count() == 1
    finally:
        database.initialize(previous)
        old.close()
    assert rows == {("domain", "xn--bcher-kva.example", "verified", True, True),
                    ("domain", "acme.example", "verified", True, True),
                    ("address", "ops@xn--strae-oqa.example", "verified", True, True),
                    ("domain", "xn--caf-dma.example", "verified", True, True)}


def test_step_6_on_the_database_under_test_restores_every_column(db):
    """The same step on this run's backend (PostgreSQL under HERALD_TEST_DATABASE_URL): the
    columns dropped as a database of step 4 lacks them come back, rows kept."""
    from peewee import SqliteDatabase
    from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

    from engine.database.migrations import _sender_verification
    from engine.database.models import Sender
    from tests import factories

    account = factories.account()  # declares example.com, as apply would have
    table = Sender._meta.table_name
    added = [f.column_name for f in Sender._meta.sorted_fields
             if f.column_name not in ("id", "account_id", "kind", "value", "verified",
                                      "created_at")]
    sqlite = isinstance(db, SqliteDatabase)
    migrator = SqliteMigrator(db) if sqlite else PostgresqlMigrator(db)
    # SQLite's own DROP COLUMN refuses a foreign key's column: peewee then copies the table.
    options = {"legacy": True} if sqlite else {}
    with db.atomic():
        migrate(*(migrator.drop_column(table, column, **options) for column in added))
    assert {c.name for c in db.get_columns(table)} == {
        "id", "account_id", "kind", "value", "verified", "created_at"}
    with db.atomic():
        _sender_verification(db)
    assert {c.name for c in db.get_columns(table)} >= set(added)
    row = Sender.get(Sender.account == account)
    assert (row.value, row.status, row.declared, row.verified) == (
        "example.com", "verified", True, True)
