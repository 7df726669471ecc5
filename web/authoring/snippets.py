"""For integrators: a ready `curl` and Python call that sends this template, its tags
filled from the sample. Placeholders stand where only the integrator knows the value."""

from __future__ import annotations

import json
import shlex
from typing import Any

from engine.database.models import Template, Workspace
from engine.plugins.manager import default_registry


def request_body(workspace: Workspace, template: Template, tags: dict[str, str],
                 has_default_to: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"tenantId": str(workspace.id), "templateId": str(template.id),
                            "tags": [{"key": k, "value": v} for k, v in tags.items()]}
    # The options only the integrator knows (a recipient where the template names none, a
    # webhook's destination), as the channel declares them.
    channel = default_registry().channel(template.channel)
    options = channel.example_options(has_default_to)
    if options and channel.options_field:
        body[channel.options_field] = options
    return body


def curl(base_url: str, body: dict[str, Any]) -> str:
    url = f"{base_url.rstrip('/')}/api/v1/notifications/send"
    data = json.dumps(body, indent=2, ensure_ascii=False)
    return (f"curl -sS -X POST {shlex.quote(url)} \\\n"
            "  -H 'Content-Type: application/json' \\\n"
            '  -H "X-Api-Key: $HERALD_API_KEY" \\\n'
            f"  -d {shlex.quote(data)}")


def python(base_url: str, body: dict[str, Any]) -> str:
    url = f"{base_url.rstrip('/')}/api/v1/notifications/send"
    # Strings, lists and objects only: the JSON is a Python literal as it stands.
    literal = json.dumps(body, indent=4, ensure_ascii=False).replace("\n", "\n    ")
    return ("import os\n\nimport requests\n\n"
            f"response = requests.post(\n    {url!r},\n"
            '    headers={"X-Api-Key": os.environ["HERALD_API_KEY"]},\n'
            f"    json={literal},\n    timeout=10,\n)\n"
            "response.raise_for_status()\nprint(response.json()[\"correlationId\"])\n")
