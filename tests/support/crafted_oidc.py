"""An OpenID provider whose ID tokens a test crafts (joserfc, a local key): discovery, JWKS,
an authorization endpoint that answers at once, and a token endpoint that checks what a
real provider checks of the client (its secret, the code, PKCE's S256 verifier) and then
returns the token the test asked for: a wrong nonce, another audience, another key."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from flask import Flask, jsonify, redirect, request
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey


@dataclass
class Crafted:
    """What the next token holds; change it between sign-ins."""

    issuer: str = ""
    client_id: str = "herald"
    client_secret: str = "crafted-secret"
    key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048,
                                                                  parameters={"kid": "one"}))
    published: list[RSAKey] = field(default_factory=list)
    claims: dict[str, Any] = field(default_factory=dict)
    nonce: str | None = None  # None: the request's own
    audience: str | None = None  # None: the client id
    expires_in: int = 300
    requests: list[dict[str, str]] = field(default_factory=list)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)

    def token(self, nonce: str) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": "crafted-1", "aud": self.audience or self.client_id,
                  "iat": now, "exp": now + self.expires_in,
                  "nonce": self.nonce if self.nonce is not None else nonce,
                  "email": "ada@example.com", "email_verified": True, **self.claims}
        return jwt.encode({"alg": "RS256", "kid": self.key.kid}, claims, self.key)


def provider_app(crafted: Crafted) -> Flask:
    app = Flask("crafted_oidc")

    @app.get("/.well-known/openid-configuration")
    def discovery():
        base = crafted.issuer
        return jsonify({"issuer": base, "authorization_endpoint": base + "/authorize",
                        "token_endpoint": base + "/token", "jwks_uri": base + "/jwks",
                        "end_session_endpoint": base + "/logout",
                        "id_token_signing_alg_values_supported": ["RS256"]})

    @app.get("/jwks")
    def jwks():
        keys = crafted.published or [crafted.key]
        return jsonify(KeySet(keys).as_dict(private=False))

    @app.get("/authorize")
    def authorize():
        args = request.args.to_dict()
        crafted.requests.append(args)
        code = secrets.token_urlsafe(16)
        crafted.codes[code] = args
        return redirect(args["redirect_uri"] + "?" + urlencode(
            {"code": code, "state": args.get("state", "")}))

    @app.post("/token")
    def token():
        auth = request.authorization
        if auth is None or (auth.username, auth.password) != (crafted.client_id,
                                                              crafted.client_secret):
            return jsonify({"error": "invalid_client"}), 401
        asked = crafted.codes.pop(request.form.get("code", ""), None)
        if asked is None:
            return jsonify({"error": "invalid_grant"}), 400
        verifier = request.form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(
            hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if asked.get("code_challenge_method") != "S256" or challenge != asked.get(
                "code_challenge"):
            return jsonify({"error": "invalid_grant", "error_description": "PKCE"}), 400
        return jsonify({"access_token": secrets.token_urlsafe(16), "token_type": "Bearer",
                        "expires_in": 300, "id_token": crafted.token(asked.get("nonce", ""))})

    return app
