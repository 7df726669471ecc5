"""URL settings read as their clients read them; no message quotes a password (#28, 7-8)."""

from __future__ import annotations

import pytest
from redis.connection import parse_url

from config.settings import ConfigError, load_settings
from engine.store.db import make_database

PASSWORD = "S3cr'Qx p@ssZ"  # a quote, a blank and an @: what a pattern-based mask misses


@pytest.mark.parametrize(("url", "fragment"), [
    ("redis://host:6379/notadb", "must be a number such as /0, got 'notadb'"),
    ("redis://host:6379/1/2", "got '1/2'"),
    ("redis://host:6379/-1", "got '-1'"),
    ("REDIS://host:6379/0", "must start with redis:// exactly"),
    ("redis://host:6379/0?db=two", "Invalid value for 'db'"),
    ("redis://host:6379/0?socket_timeout=soon", "Invalid value for 'socket_timeout'"),
    ("redis://[::1/0", "Invalid IPv6 URL"),
])
def test_a_redis_url_its_client_would_misread_is_one_clear_line(url, fragment):
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_REDIS_URL": url})
    assert err.value.setting == "HERALD_REDIS_URL"
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("url", ["redis://host:6379/3", "redis://host:6379", "redis://host/",
                                 "rediss://:pw@host:6380/15?socket_timeout=2",
                                 "unix:///run/redis.sock?db=2"])
def test_a_redis_url_is_kept_as_its_client_reads_it(url):
    assert load_settings({"HERALD_REDIS_URL": url}).redis_url == url
    parse_url(url)  # the client agrees


def test_redis_database_number_reaches_the_client():
    url = load_settings({"HERALD_REDIS_URL": "redis://host:6379/7"}).redis_url
    assert parse_url(url)["db"] == 7


@pytest.mark.parametrize(("url", "fragment"), [
    ("postgresql://h/db?bogus=1", 'invalid connection option "bogus"'),
    ("postgresql://h/db?prepare=maybe", "prepare must be true or false"),
    ("postgresql://h/db?max_connections=many", "max_connections must be a whole number"),
    ("postgresql://[::1/db", "Invalid IPv6 URL"),
])
def test_a_database_url_the_driver_would_refuse_at_connect_is_refused_at_start(url, fragment):
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_DATABASE_URL": url})
    assert err.value.setting == "HERALD_DATABASE_URL"
    assert fragment in str(err.value)


def test_a_database_url_with_libpq_options_is_accepted_and_built():
    url = "postgresql://u:pw@h:5433/db?sslmode=require&connect_timeout=3&prepare=false"
    assert load_settings({"HERALD_DATABASE_URL": url}).database_url == url
    assert make_database(url).herald_prepare is False


@pytest.mark.parametrize(("name", "template"), [
    ("HERALD_DATABASE_URL", "postgresql://u:{pw}@db:99999/herald"),
    ("HERALD_DATABASE_URL", "mysql://u:{pw}@db/herald"),
    ("HERALD_DATABASE_URL", "postgresql://u:{pw}@[::1/herald"),
    ("HERALD_REDIS_URL", "redis://u:{pw}@cache:6379/notadb"),
    ("HERALD_REDIS_URL", "redis://u:{pw}@cache:port/0"),
    ("HERALD_REDIS_URL", "http://u:{pw}@cache/0"),
    ("HERALD_PUBLIC_URL", "ftp://u:{pw}@example.com"),
    ("HERALD_EMAIL_PROVIDER", "smtp://u:{pw}@[::1"),
])
def test_no_settings_error_echoes_a_password(name, template):
    with pytest.raises(ConfigError) as err:
        load_settings({name: template.format(pw=PASSWORD)})
    message = str(err.value)
    assert message.startswith(f"{name}: ")
    for piece in ("S3cr", "Qx", "p@ssZ"):
        assert piece not in message, message


def test_the_command_stops_with_one_line_naming_the_setting(tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env.update({"HERALD_DATABASE_URL": f"sqlite:///{tmp_path / 'h.sqlite3'}",
                "HERALD_REDIS_URL": "redis://host:6379/notadb"})
    proc = subprocess.run([sys.executable, "-m", "cli", "worker", "--burst"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == ("herald: configuration error: HERALD_REDIS_URL: the database (the "
                           "path after the host) must be a number such as /0, got 'notadb'\n")
