"""ID tokens Herald must refuse, from a provider whose tokens the test crafts
(tests/support/crafted_oidc.py): the whole flow over real HTTP (the sign-in's redirect, the
provider's answer, the code redeemed with PKCE), the token wrong in one way at a time."""

from __future__ import annotations

import re

import pytest
import requests
from joserfc.jwk import RSAKey

from engine import runtime
from engine.database.models.people import OidcIdentity, User
from engine.people import single_sign_on
from tests import factories
from tests.support.app_server import serving
from tests.support.crafted_oidc import Crafted, provider_app
from tests.web.conftest import make_user


@pytest.fixture
def crafted(live):
    provider = Crafted()
    with serving(provider_app(provider)) as url:
        provider.issuer = url
        with live.gate.held():
            runtime.configure(live.settings.with_changes(
                oidc_issuer=url, oidc_client_id=provider.client_id,
                oidc_client_secret=provider.client_secret))
            single_sign_on.forget()
        yield provider
    single_sign_on.forget()


def _sign_in(live) -> requests.Response:
    """Press `Sign in with single sign-on` and follow every redirect back to Herald."""
    http = requests.Session()
    page = http.get(live.url + "/", timeout=30).text
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    answer = http.post(live.url + "/sign-in/sso", data={"csrf_token": token}, timeout=30)
    answer.signed_in = "Sign out" in http.get(live.url + "/workspaces", timeout=30).text
    return answer


def test_a_right_token_signs_in_with_pkce_state_and_nonce(live, crafted):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    answer = _sign_in(live)
    assert answer.status_code == 200 and answer.signed_in
    asked = crafted.requests[-1]
    assert asked["code_challenge_method"] == "S256" and asked["nonce"] and asked["state"]
    assert OidcIdentity.get().subject == "crafted-1"


@pytest.mark.parametrize("wrong, said", [
    ({"nonce": "not-the-one-asked"}, "nonce"),
    ({"audience": "another-client"}, "aud"),
    ({"key": RSAKey.generate_key(2048, parameters={"kid": "one"}),
      "published": ["own"]}, "signature"),
    ({"expires_in": -3600}, "expired"),
    ({"claims": {"iss": "https://elsewhere.example"}}, "iss"),
])
def test_a_wrong_token_is_refused(live, crafted, wrong, said):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    own = crafted.key
    for name, value in wrong.items():
        setattr(crafted, name, [own] if value == ["own"] else value)
    answer = _sign_in(live)
    assert answer.status_code == 403
    assert "Single sign-on did not sign you in" in answer.text
    assert said in answer.text.lower()
    assert not answer.signed_in


def test_a_new_signing_key_is_fetched_when_a_token_names_it(live, crafted, monkeypatch):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    assert _sign_in(live).signed_in  # the keys are now kept
    rotated = RSAKey.generate_key(2048, parameters={"kid": "two"})
    crafted.key, crafted.published = rotated, [rotated]
    # Within the refetch interval an unknown key id is refused, not fetched...
    assert not _sign_in(live).signed_in
    # ...and once it has passed, the keys are fetched again and the new one signs in.
    monkeypatch.setattr(single_sign_on, "JWKS_REFRESH_AFTER", 0.0)
    assert _sign_in(live).signed_in


def test_an_answer_with_another_state_is_refused(live, crafted):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    http = requests.Session()
    page = http.get(live.url + "/", timeout=30).text
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    to_provider = http.post(live.url + "/sign-in/sso", data={"csrf_token": token},
                            timeout=30, allow_redirects=False).headers["Location"]
    back = requests.get(to_provider, allow_redirects=False, timeout=30).headers["Location"]
    forged = re.sub(r"state=[^&]+", "state=forged", back)
    answer = http.get(forged, timeout=30)
    assert answer.status_code == 403 and "state" in answer.text
    assert User.select().count() == 1


def test_a_roles_claim_gives_the_roles_it_names_and_keeps_the_last_owner(live, crafted):
    from engine.database.models.people import Membership

    mine, other, promoted = (factories.workspace() for _ in range(3))
    ada = make_user("ada@example.com", mine, "owner", "Ada")
    make_user("ada@example.com", promoted, "member", "Ada")
    with live.gate.held():
        runtime.configure(runtime.settings().with_changes(oidc_roles_claim="groups"))
    crafted.claims = {"groups": [f"{other.id}:admin", f"{promoted.id}:owner",
                                 f"{mine.id}:member", "engineering", "x:owner"]}
    assert _sign_in(live).signed_in

    def role(ws):
        return Membership.get(Membership.user == ada.id, Membership.workspace == ws.id).role

    assert (role(other), role(promoted)) == ("admin", "owner")
    assert role(mine) == "owner"  # the only Owner is never demoted by a claim


def test_the_second_step_is_asked_unless_the_provider_says_it_asked_one(live, crafted):
    import pyotp

    from engine.people import two_factor

    ws = factories.workspace()
    ada = make_user("ada@example.com", ws, "owner", "Ada")
    two_factor.confirm(ada, pyotp.TOTP(two_factor.begin(ada)).now())
    two_factor.require(ws, True, ada)
    answer = _sign_in(live)
    assert answer.url.endswith("/sign-in/code") and not answer.signed_in
    crafted.claims = {"amr": ["pwd", "mfa"]}
    answer = _sign_in(live)
    assert answer.signed_in and f"/w/{ws.id}/" in answer.url

