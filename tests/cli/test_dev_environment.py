"""`herald dev` gives its children what the Senders page needs (issue 40): demo DKIM and
return-path zones, valid settings, and never over the operator's own."""

from __future__ import annotations

from cli.dev import DEV_DKIM_ZONE, DEV_RETURN_PATH_DOMAIN, dev_environment
from config.settings import load_settings
from engine.senders.names import issued_records


def test_herald_dev_sets_demo_zones_that_the_settings_accept():
    env = dev_environment({"HERALD_ENV": "development"}, 8025)
    settings = load_settings(env)
    assert (settings.dkim_zone, settings.return_path_domain) == (DEV_DKIM_ZONE,
                                                                 DEV_RETURN_PATH_DOMAIN)
    records = issued_records("acme.example", "acme", settings.dkim_zone,
                             settings.return_path_domain)
    assert any(r["value"].endswith(DEV_DKIM_ZONE) for r in records)
    assert settings.public_url == "http://127.0.0.1:8025"


def test_herald_dev_keeps_the_operators_own_zones():
    env = dev_environment({"HERALD_DKIM_ZONE": "dkim.mail.example",
                           "HERALD_RETURN_PATH_DOMAIN": "bounce.mail.example"}, 8025)
    settings = load_settings(env)
    assert settings.dkim_zone == "dkim.mail.example"
    assert settings.return_path_domain == "bounce.mail.example"
