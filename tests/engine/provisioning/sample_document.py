"""A provisioning document that names every kind of thing `herald apply` makes: the
starting point the provisioning and CLI tests change."""

from __future__ import annotations

WS_ID = "2b1c6a8e-4d0f-4c53-9d7e-2f5b0c8a9e11"
TPL_ID = "7d3e1f20-1c2b-4a5d-8e9f-0a1b2c3d4e5f"


def sample() -> dict:
    return {
        "accounts": [{
            "name": "Acme",
            "plan": "pro",
            "monthlyLimit": 50000,
            "webhookDelivery": True,
            "senders": {"domains": ["acme.example"], "addresses": ["ops@other.example"]},
            "workspaces": [{
                "id": WS_ID,
                "name": "Production",
                "emailProvider": None,
                "suppressions": ["bounced@acme.example"],
                "apiKeys": [
                    {"name": "backend"},
                    {"name": "old", "status": "revoked"},
                    {"name": "temp", "expiresAt": "2020-01-01T00:00:00Z"},
                ],
                "projects": [{
                    "name": "Onboarding",
                    "defaults": {"to": [], "cc": [], "bcc": ["audit@acme.example"]},
                    "containers": [{
                        "name": "Emails",
                        "defaults": {},
                        "containers": [{"name": "Nested", "templates": []}],
                        "templates": [{
                            "id": TPL_ID,
                            "name": "Welcome",
                            "channel": "email",
                            "defaults": {"to": ["team@acme.example"]},
                            "versions": [
                                {"status": "published", "subject": "Welcome {{name}}",
                                 "body": "<p>Hi {{name}}</p>", "htmlHead": "<title>W</title>",
                                 "fromAddress": "hello@acme.example", "fromName": "Acme",
                                 "emailType": "Transactional", "trackOpens": False,
                                 "trackClicks": False},
                                {"status": "published", "subject": "Welcome again {{name}}",
                                 "body": "<p>Hello {{name}}</p>",
                                 "fromAddress": "hello@acme.example"},
                                {"status": "draft", "subject": "Draft", "body": "<p>wip</p>"},
                            ],
                        }],
                    }],
                    "templates": [{
                        "name": "Code", "channel": "sms",
                        "versions": [{"status": "published", "body": "Code {{code}}",
                                      "fromNumber": "+15005550006"}],
                    }],
                }],
            }],
        }]
    }


WELCOME = "accounts[0].workspaces[0].projects[0].containers[0].templates[0]"


def welcome(doc: dict) -> dict:
    return doc["accounts"][0]["workspaces"][0]["projects"][0]["containers"][0]["templates"][0]
