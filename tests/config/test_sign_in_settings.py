"""HERALD_OIDC_*: single sign-on's settings, checked together at start."""

from __future__ import annotations

import pytest

from config.settings import ConfigError, load_settings

ISSUER = {"HERALD_OIDC_ISSUER": "https://id.example.com/realms/acme",
          "HERALD_OIDC_CLIENT_ID": "herald", "HERALD_OIDC_CLIENT_SECRET": "s3cret"}


def test_unset_is_no_single_sign_on():
    settings = load_settings({})
    assert (settings.oidc_issuer, settings.oidc_only, settings.oidc_roles_claim) == \
        ("", False, "")


def test_values_are_read_and_the_secret_is_not_shown():
    settings = load_settings({**ISSUER, "HERALD_OIDC_ONLY": "1",
                              "HERALD_OIDC_ROLES_CLAIM": "groups"})
    assert settings.oidc_issuer == "https://id.example.com/realms/acme"
    assert (settings.oidc_client_id, settings.oidc_only) == ("herald", True)
    assert settings.oidc_roles_claim == "groups"
    assert "s3cret" not in repr(settings)


@pytest.mark.parametrize(("environ", "setting"), [
    ({**ISSUER, "HERALD_OIDC_ISSUER": "http://id.example.com"}, "HERALD_OIDC_ISSUER"),
    ({**ISSUER, "HERALD_OIDC_ISSUER": "https://id.example.com/?x=1"}, "HERALD_OIDC_ISSUER"),
    ({**ISSUER, "HERALD_OIDC_CLIENT_ID": ""}, "HERALD_OIDC_CLIENT_ID"),
    ({**ISSUER, "HERALD_OIDC_CLIENT_SECRET": ""}, "HERALD_OIDC_CLIENT_SECRET"),
    ({"HERALD_OIDC_ONLY": "true"}, "HERALD_OIDC_ONLY"),
    ({"HERALD_OIDC_CLIENT_ID": "herald"}, "HERALD_OIDC_CLIENT_ID"),
    ({**ISSUER, "HERALD_OIDC_ONLY": "sometimes"}, "HERALD_OIDC_ONLY"),
    ({**ISSUER, "HERALD_OIDC_ROLES_CLAIM": "a b;c"}, "HERALD_OIDC_ROLES_CLAIM"),
])
def test_a_setting_that_cannot_work_is_named(environ, setting):
    with pytest.raises(ConfigError) as refused:
        load_settings(environ)
    assert refused.value.setting == setting


def test_http_is_accepted_on_a_loopback_test_provider():
    settings = load_settings({**ISSUER, "HERALD_OIDC_ISSUER": "http://127.0.0.1:9400"})
    assert settings.oidc_issuer == "http://127.0.0.1:9400"
