import pytest

from config.settings import ConfigError, load_settings
from engine.plugins.manager import check_providers
from tests.conftest import TEST_SECRET_KEY


def checked(environ: dict[str, str]):
    """Settings as every command and the app factory start: read, then providers resolved."""
    settings = load_settings(environ)
    check_providers(settings)
    return settings


def test_defaults_are_development_with_inbox_providers():
    settings = load_settings({})
    assert settings.env == "development"
    assert settings.email_provider == "inbox://"
    assert settings.database_url.startswith("sqlite:///")


def test_production_requires_secret_key():
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_ENV": "production"})
    assert err.value.setting == "HERALD_SECRET_KEY"


def test_production_refuses_private_webhook_destinations():
    with pytest.raises(ConfigError) as err:
        load_settings(
            {
                "HERALD_ENV": "production",
                "HERALD_SECRET_KEY": TEST_SECRET_KEY,
                "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS": "true",
            }
        )
    assert err.value.setting == "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS"


@pytest.mark.parametrize(("name", "value", "attr", "parsed", "default"), [
    ("HERALD_EMAIL_BACKOFF", "1,2, 4", "email_backoff", (1.0, 2.0, 4.0), ()),
    ("HERALD_LIST_SWEEP_SECONDS", "0.5", "list_sweep_seconds", 0.5, 5.0),
])
def test_shorter_waits_for_tests_are_for_development_and_test_only(name, value, attr, parsed,
                                                                    default):
    assert getattr(load_settings({"HERALD_ENV": "test", name: value}), attr) == parsed
    assert getattr(load_settings({}), attr) == default
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": TEST_SECRET_KEY,
                       "HERALD_EMAIL_PROVIDER": "smtp://mail:25", name: value})
    assert err.value.setting == name


def test_production_refuses_the_dev_inbox():
    with pytest.raises(ConfigError) as err:
        load_settings(
            {"HERALD_ENV": "production", "HERALD_SECRET_KEY": TEST_SECRET_KEY,
             "HERALD_EMAIL_PROVIDER": "inbox://"}
        )
    assert err.value.setting == "HERALD_EMAIL_PROVIDER"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HERALD_ENV", "staging"),
        ("HERALD_PORT", "eighty"),
        ("HERALD_PORT", "70000"),
        ("HERALD_DATABASE_URL", "mysql://x"),
        ("HERALD_REDIS_URL", "http://x"),
        ("HERALD_WEBHOOK_MAX_ATTEMPTS", "0"),
        ("HERALD_WEBHOOK_BACKOFF", "1,2,abc"),
        ("HERALD_WEBHOOK_BACKOFF", "10,1000"),
        ("HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS", "maybe"),
        ("HERALD_TRUSTED_PROXIES", "-1"),
        ("HERALD_PUBLIC_URL", "ftp://x"),
        ("HERALD_DATABASE_URL", "postgresql://db:99999/herald"),
        ("HERALD_REDIS_URL", "redis://cache:port/0"),
        ("HERALD_DATABASE_URL", "postgresql://h/db?max_connections=many"),
        ("HERALD_DATABASE_URL", "postgresql://h/db?max_connections=0"),
        ("HERALD_RECONCILE_AFTER_SECONDS", "nan"),
        ("HERALD_RECONCILE_AFTER_SECONDS", "inf"),
        ("HERALD_RECONCILE_AFTER_SECONDS", "1e300"),  # the reconciler's cut-off: year < 1
        ("HERALD_KEY_CACHE_SECONDS", "nan"),
        ("HERALD_KEY_CACHE_SECONDS", "-inf"),
        ("HERALD_WEBHOOK_BACKOFF", "1,nan"),
        ("HERALD_EMAIL_BACKOFF", "1,1000"),
        ("HERALD_LIST_SWEEP_SECONDS", "60"),
        ("HERALD_WEBHOOK_MAX_ATTEMPTS", "9" * 20),  # an SQL parameter
        ("HERALD_RATE_LIMIT_SEND_PER_KEY", "9" * 20),
        ("HERALD_TRUSTED_PROXIES", "9" * 20),
    ],
)
def test_bad_setting_is_named_in_the_error(name, value):
    with pytest.raises(ConfigError) as err:
        checked({name: value})
    assert err.value.setting == name
    assert name in str(err.value)


def test_a_pool_size_in_the_database_url_is_accepted():
    url = "postgresql://postgres@127.0.0.1:5432/test?max_connections=5&sslmode=disable"
    assert load_settings({"HERALD_DATABASE_URL": url}).database_url == url


def test_values_are_parsed():
    settings = load_settings(
        {"HERALD_PORT": "8123", "HERALD_WEBHOOK_BACKOFF": "1, 5,30", "HERALD_TRUSTED_PROXIES": "2"}
    )
    assert settings.port == 8123
    assert settings.webhook_backoff == (1.0, 5.0, 30.0)
    assert settings.trusted_proxies == 2


@pytest.mark.parametrize("name", ["HERALD_EMAIL_PROVIDER", "HERALD_SMS_PROVIDER"])
@pytest.mark.parametrize(("value", "problem"), [
    ("nosuch://x", "no provider plugin handles nosuch:// URLs"),
    ("smtp://host:25?tls=bogus", "tls must be one of none, starttls, ssl"),
    ("smtp://host:25?timeout=soon", "timeout must be a positive number"),
    ("smtp://host:25?timeout=31", "(at most 30)"),
    ("smtp://host:25?timeout=nan", "(at most 30)"),
    ("postmark://tok@?scheme=http://127.0.0.1:9911/x%23", "scheme must be https or http"),
    ("smtp://host:port", "Port could not be cast"),
    ("twilio://", "twilio provider: use twilio://ACCOUNT_SID:AUTH_TOKEN@"),
])
def test_a_provider_url_no_plugin_can_send_with_is_refused_at_start_up(name, value, problem):
    with pytest.raises(ConfigError) as err:
        checked({name: value})
    assert err.value.setting == name
    assert problem in str(err.value)


def test_provider_urls_the_plugins_take_are_accepted():
    settings = checked({"HERALD_EMAIL_PROVIDER": "smtp://u:p@mail:587?tls=starttls&timeout=5",
                        "HERALD_SMS_PROVIDER": "twilio://sid:token@?from=%2B15005550006"})
    assert settings.email_provider.startswith("smtp://")
    assert checked({"HERALD_EMAIL_PROVIDER": "postmark://token@"}).sms_provider == "inbox://"


def test_reading_settings_loads_no_plugin():
    # config/ imports nothing of Herald's: a scheme no plugin takes is the engine's to refuse.
    assert load_settings({"HERALD_EMAIL_PROVIDER": "nosuch://x"}).email_provider == "nosuch://x"


def test_postgresql_without_its_driver_is_one_configuration_error(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "psycopg2" else real(name, *args))
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/x"})
    assert err.value.setting == "HERALD_DATABASE_URL"
    assert "pip install 'herald-notification-service[postgres]'" in str(err.value)
    # SQLite needs no driver of its own.
    assert load_settings({"HERALD_DATABASE_URL": "sqlite:///x.db"}).database_url == "sqlite:///x.db"


def _published_keys() -> set[str]:
    """Every literal this repository assigns to a secret or a secret key, tests and bench
    included: anyone can read them, so production must refuse each (by the published list
    or by the entropy floor)."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    pattern = re.compile(r"""SECRET(?:_KEY)?["']?\s*[:=]\s*["']([^"'\s]{8,})["']""", re.I)
    found: set[str] = set()
    for path in root.rglob("*"):
        if (path.suffix not in {".py", ".md", ".yml", ".yaml", ".toml", ".cfg", ".env", ""}
                or not path.is_file() or {".venv", ".git", "node_modules"} & set(
                    path.relative_to(root).parts)):
            continue
        found.update(pattern.findall(path.read_text(errors="replace")))
    return found


def test_the_source_publishes_a_secret_key_the_scan_finds():
    from config.settings import DEV_SECRET_KEY

    assert DEV_SECRET_KEY in _published_keys()


@pytest.mark.parametrize("key", sorted(_published_keys()))
def test_production_refuses_a_secret_key_published_in_the_source(key):
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": key,
                       "HERALD_EMAIL_PROVIDER": "smtp://mx.example:25"})
    assert err.value.setting == "HERALD_SECRET_KEY"
    assert "32 characters" in str(err.value) or "rule:" in str(err.value)


def test_the_tests_own_key_and_the_benchs_are_refused_in_production():
    """Issue 37: production took the key the tests published, and ``'x' * 40``."""
    from bench.common import BENCH_SECRET

    for key in ("test-secret-key-0123456789-abcdefghijklmnop", BENCH_SECRET):
        with pytest.raises(ConfigError, match="rule: no key published"):
            load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": key})
    for key in ("x" * 40, "passwordpasswordpasswordpassword", "ab" * 30):
        with pytest.raises(ConfigError, match="rule: at least 100 bits"):
            load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": key})
    assert load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": TEST_SECRET_KEY,
                          "HERALD_EMAIL_PROVIDER": "smtp://mx.example:25",
                          "HERALD_SMS_PROVIDER": "twilio://sid:tok@"}).env == "production"


@pytest.mark.parametrize("url", ["INBOX://", " inbox://", "Inbox://", "\tinbox://"])
@pytest.mark.parametrize("setting", ["HERALD_EMAIL_PROVIDER", "HERALD_SMS_PROVIDER"])
def test_production_refuses_the_dev_inbox_in_any_spelling_the_resolver_takes(setting, url):
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": TEST_SECRET_KEY,
                       setting: url})
    assert err.value.setting == setting


def _shipped_yaml_secrets() -> set[str]:
    """Every value that deploy/'s manifests, the chart's values and the example env files
    give a setting whose name holds SECRET_KEY, quoted or not (a placeholder is a key
    anyone can read)."""
    import pathlib

    import yaml

    root = pathlib.Path(__file__).resolve().parents[2] / "deploy"
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for name, value in node.items():
                if "SECRET_KEY" in str(name).upper() and isinstance(value, str) and value:
                    found.add(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for path in root.rglob("*.yaml"):
        if "templates" in path.parts:  # Helm templates are not YAML until rendered
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            walk(doc)
    for path in root.rglob("*.env*"):
        for line in path.read_text().splitlines():
            name, _, value = line.partition("=")
            if "SECRET_KEY" in name and not name.lstrip().startswith("#") and value:
                found.add(value.strip().strip("'\""))
    return found


def test_the_scan_of_deploy_finds_the_manifests_placeholder():
    import pathlib

    import yaml

    secret = pathlib.Path(__file__).resolve().parents[2] / "deploy/kubernetes/secret.yaml"
    placeholder = yaml.safe_load(secret.read_text())["stringData"]["HERALD_SECRET_KEY"]
    assert placeholder in _shipped_yaml_secrets()


@pytest.mark.parametrize("key", sorted(_shipped_yaml_secrets()))
def test_production_refuses_every_key_deploy_ships(key):
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": key,
                       "HERALD_EMAIL_PROVIDER": "smtp://mx.example:25"})
    assert err.value.setting == "HERALD_SECRET_KEY"


@pytest.mark.parametrize("key", [
    "CHANGE-ME-at-least-32-characters-of-randomness",
    "0123456789" * 5,
    "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",
    "Tr0ub4dor&3Tr0ub4dor&3Tr0ub4dor&3Tr0ub4dor&3",
    "herald-herald-herald-herald-herald-herald",
    "qwertyuiopasdfghjklzxcvbnm1234567890qwertyuiop",
])
def test_production_refuses_a_key_with_a_guessable_pattern(key):
    """Shannon's estimate counts characters: ten digits repeated pass it. zxcvbn sees the
    sequence, the repeat, the keyboard row and the words."""
    with pytest.raises(ConfigError) as err:
        load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": key,
                       "HERALD_EMAIL_PROVIDER": "smtp://mx.example:25"})
    assert err.value.setting == "HERALD_SECRET_KEY"
    assert "rule:" in str(err.value)


def test_a_generated_key_passes_every_rule():
    import secrets

    for _ in range(20):
        for key in (secrets.token_urlsafe(48), secrets.token_hex(32), secrets.token_hex(16)):
            settings = load_settings({"HERALD_ENV": "production", "HERALD_SECRET_KEY": key,
                                      "HERALD_EMAIL_PROVIDER": "smtp://mx.example:25"})
            assert settings.secret_key == key
