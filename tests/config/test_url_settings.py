"""URL settings read as their clients read them; no message quotes a password (#28, 7-8)."""

from __future__ import annotations

import pytest
from redis.connection import parse_url

from config.settings import ConfigError, load_settings
from engine.database.db import make_database

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


@pytest.mark.parametrize(("url", "fragment"), [
    ("redis+sentinel:///herald", "no sentinel address"),
    ("redis+sentinel://s1:26379,s2:26379", "must name the service"),
    ("redis+sentinel://s1:26379/", "must name the service"),
    ("redis+sentinel://s1:port/herald", "sentinel port must be a number"),
    ("redis+sentinel://s1:26379,:26380/herald", "has no host"),
    ("redis+sentinel://s1/herald/notadb", "must be a number, got 'notadb'"),
    ("redis+sentinel://s1/herald/0?ssl=maybe", "unknown option 'ssl'"),
    ("REDIS+SENTINEL://s1/herald", "must start with redis+sentinel:// exactly"),
])
def test_a_sentinel_url_that_names_no_primary_is_one_clear_line(url, fragment):
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_REDIS_URL": url})
    assert err.value.setting == "HERALD_REDIS_URL"
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_a_sentinel_url_names_its_sentinels_service_database_and_passwords():
    from config.url_settings import parse_sentinel_url

    url = ("redis+sentinel://:pw%40x@s1:26380,s2,[::1]:26381/herald-main/3"
           "?sentinel_password=spw")
    assert load_settings({"HERALD_REDIS_URL": url}).redis_url == url
    target = parse_sentinel_url(url)
    assert target.sentinels == (("s1", 26380), ("s2", 26379), ("::1", 26381))
    assert (target.service, target.db) == ("herald-main", 3)
    assert (target.username, target.password, target.sentinel_password) == (None, "pw@x", "spw")
    assert parse_sentinel_url("redis+sentinel://herald:pw@s1/svc").username == "herald"
    assert parse_sentinel_url("redis+sentinel://s1/svc").db == 0


@pytest.mark.parametrize("template", [
    "redis+sentinel://:{pw}@s1:26379/herald/notadb",
    "redis+sentinel://u:{pw}@s1:port/herald",
    "redis+sentinel://s1:26379/herald/0?sentinel_password={pw}&bogus=1",
])
def test_no_sentinel_url_error_echoes_a_password(template):
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_REDIS_URL": template.format(pw="S3crQxZ")})
    assert "S3crQxZ" not in str(err.value)


def test_a_libpq_multi_host_url_reaches_the_driver_host_by_host():
    """A PostgreSQL failover setup: libpq tries the hosts in order and keeps the one that
    takes writes (docs/operations.md)."""
    url = ("postgresql://herald:pw@pg-a:5432,pg-b:5433,[::1]/herald"
           "?target_session_attrs=read-write&connect_timeout=3")
    assert load_settings({"HERALD_DATABASE_URL": url}).database_url == url
    params = make_database(url).connect_params
    assert (params["host"], params["port"]) == ("pg-a,pg-b,::1", "5432,5433,5432")
    assert params["target_session_attrs"] == "read-write"
    assert make_database("postgresql://u@h1,h2/db").connect_params["port"] == 5432
    from psycopg2.extensions import make_dsn

    dsn = make_dsn(**{k: v for k, v in params.items() if v is not None}, dbname="herald")
    assert "host=pg-a,pg-b,::1" in dsn and "target_session_attrs=read-write" in dsn


@pytest.mark.parametrize(("url", "fragment"), [
    ("postgresql://h1:5432,h2:99999/db", "got '99999'"),
    ("postgresql://h1:5432,:5433/db", "a host of the list is empty"),
    ("postgresql://h1,h2/db?target_session_attrs=sometimes", "target_session_attrs"),
])
def test_a_multi_host_url_the_driver_would_refuse_is_refused_at_start(url, fragment):
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_DATABASE_URL": url})
    assert fragment in str(err.value)
