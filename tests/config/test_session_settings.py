"""HERALD_SESSION_IDLE_MINUTES and HERALD_SESSION_LIFETIME_DAYS, checked at start."""

from __future__ import annotations

import pytest

from config.settings import ConfigError, load_settings


def test_defaults_are_twelve_hours_idle_and_thirty_days_in_all():
    settings = load_settings({})
    assert (settings.session_idle_minutes, settings.session_lifetime_days) == (720, 30)


def test_values_are_read():
    settings = load_settings({"HERALD_SESSION_IDLE_MINUTES": "30",
                              "HERALD_SESSION_LIFETIME_DAYS": " 7 "})
    assert (settings.session_idle_minutes, settings.session_lifetime_days) == (30, 7)


@pytest.mark.parametrize(("setting", "raw"), [
    ("HERALD_SESSION_IDLE_MINUTES", "4"), ("HERALD_SESSION_IDLE_MINUTES", "10081"),
    ("HERALD_SESSION_IDLE_MINUTES", "1.5"), ("HERALD_SESSION_LIFETIME_DAYS", "0"),
    ("HERALD_SESSION_LIFETIME_DAYS", "366"), ("HERALD_SESSION_LIFETIME_DAYS", "a month"),
])
def test_a_bad_value_names_its_setting(setting, raw):
    with pytest.raises(ConfigError) as refused:
        load_settings({setting: raw})
    assert refused.value.setting == setting
