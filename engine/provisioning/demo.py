"""The demo tenant that `herald dev` seeds: one account, workspace and a template per channel."""

from __future__ import annotations

from typing import Any

DEMO_WORKSPACE_ID = "2b1c6a8e-4d0f-4c53-9d7e-2f5b0c8a9e11"
DEMO_EMAIL_TEMPLATE_ID = "7d3e1f20-1c2b-4a5d-8e9f-0a1b2c3d4e5f"
DEMO_SMS_TEMPLATE_ID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
DEMO_WEBHOOK_TEMPLATE_ID = "4c5d6e7f-8091-4a2b-9c3d-4e5f60718293"


def demo_document() -> dict[str, Any]:
    return {
        "accounts": [{
            "name": "Demo",
            "plan": "business",
            "monthlyLimit": 10000,
            "webhookDelivery": True,
            "senders": {"domains": ["example.com"], "addresses": []},
            "workspaces": [{
                "id": DEMO_WORKSPACE_ID,
                "name": "Demo",
                "projects": [{
                    "name": "Getting started",
                    "defaults": {"bcc": []},
                    "containers": [{
                        "name": "Emails",
                        "templates": [{
                            "id": DEMO_EMAIL_TEMPLATE_ID,
                            "name": "Welcome",
                            "channel": "email",
                            "defaults": {"to": ["team@example.com"]},
                            "versions": [{
                                "status": "published",
                                "subject": "Welcome, {{name}}!",
                                "body": "<h1>Hi {{name}}</h1><p>Your account is ready. "
                                        "<a href=\"https://example.com/start\">Start here</a>."
                                        "</p>",
                                "htmlHead": "<title>Welcome</title>",
                                "fromAddress": "hello@example.com",
                                "fromName": "Herald Demo",
                                "emailType": "Transactional",
                            }],
                        }],
                    }],
                    "templates": [
                        {
                            "id": DEMO_SMS_TEMPLATE_ID,
                            "name": "Login code",
                            "channel": "sms",
                            "versions": [{"status": "published",
                                          "body": "Your code is {{code}}",
                                          "fromNumber": "+15005550006"}],
                        },
                        {
                            "id": DEMO_WEBHOOK_TEMPLATE_ID,
                            "name": "Order shipped",
                            "channel": "webhook",
                            "versions": [{"status": "published",
                                          "body": "{\"order\": \"{{orderId}}\"}",
                                          "contentType": "application/json"}],
                        },
                    ],
                }],
            }],
        }]
    }
