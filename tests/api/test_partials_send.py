"""Partials through the send path: a send renders each partial's live version, publishing a
footer changes the next send of every template calling it (the workspace's generation, not
this process's cache clearing), and publish refuses what would fail every send."""

from __future__ import annotations

import pytest

from engine.catalog import partials
from engine.catalog.versions import VersionError, publish
from engine.database.models import Notification, Template, TemplateVersion
from engine.database.models.partials import PartialVersion
from engine.database.vocabulary import VersionStatus
from tests import factories

from .test_send import post


def _partial(ws, name: str, body: str) -> None:
    partial = partials.create(ws.id, name)
    draft = partials.draft(partial)
    draft.body = body
    draft.save()
    partials.publish(draft, by="test")


def _new_draft(ws, name: str, body: str) -> PartialVersion:
    partial = next(p for p in partials.live_bodies(ws.id).values()
                   if p.partial.name == name).partial
    return PartialVersion.create(partial=partial, number=partials.next_number(partial),
                                 status=VersionStatus.DRAFT, body=body)


def _send(client, ws, key, template) -> dict:
    body = {"tenantId": str(ws.id), "templateId": str(template.id),
            "tags": [{"key": "name", "value": "Ada"}, {"key": "city", "value": "Lyon"}]}
    response = post(client, body, key)
    assert response.status_code == 202, response.json
    row = Notification.get(Notification.correlation_id == response.json["correlationId"])
    return row.payload


def test_publishing_a_new_footer_changes_the_next_send_of_two_templates(client, settings):
    ws = factories.workspace()
    key = factories.api_key(ws)
    _partial(ws, "footer", "<footer>Acme, {{city}}</footer>")
    _partial(ws, "layout", "<main>{{> @partial-block}}</main>{{> footer}}")
    welcome = factories.template(ws, defaults={"to": ["a@example.com"]}, content={
        "body": "{{#> layout}}<p>Welcome {{name}}</p>{{/layout}}"})
    receipt = factories.template(ws, defaults={"to": ["a@example.com"]}, content={
        "body": "<p>Receipt for {{name}}</p>{{> footer}}", "subject": "Receipt"})
    first = [_send(client, ws, key, t)["html"] for t in (welcome, receipt)]
    assert "<main><p>Welcome Ada</p></main><footer>Acme, Lyon</footer>" in first[0]
    assert "<footer>Acme, Lyon</footer>" in first[1]

    partials.publish(_new_draft(ws, "footer", "<footer>Acme Ltd &middot; {{city}}</footer>"))
    after = [_send(client, ws, key, t)["html"] for t in (welcome, receipt)]
    for html in after:
        assert "<footer>Acme Ltd &middot; Lyon</footer>" in html
        assert "Acme, Lyon" not in html


def test_a_template_calling_a_missing_partial_is_refused_at_publish(settings):
    ws = factories.workspace()
    template = factories.template(ws, publish_it=False,
                                  content={"body": "<p>x</p>{{> signature}}"})
    draft = TemplateVersion.get(TemplateVersion.template == template)
    with pytest.raises(VersionError, match="partial 'signature' does not exist"):
        publish(draft)
    assert Template.get_by_id(template.id).versions.where(
        TemplateVersion.status == VersionStatus.LIVE).count() == 0


def test_a_self_including_partial_is_refused_at_publish_naming_it(settings):
    ws = factories.workspace()
    loop = partials.create(ws.id, "loop")
    draft = partials.draft(loop)
    draft.body = "again {{> loop}}"
    draft.save()
    with pytest.raises(partials.PartialError, match="partial 'loop' includes itself"):
        partials.publish(draft)
    assert partials.live(loop) is None


def test_a_partial_including_itself_through_another_is_refused(settings):
    ws = factories.workspace()
    _partial(ws, "inner", "inner")
    outer = partials.create(ws.id, "outer")
    draft = partials.draft(outer)
    draft.body = "{{> inner}}"
    draft.save()
    partials.publish(draft)
    again = _new_draft(ws, "inner", "{{#> outer}}x{{/outer}}")
    with pytest.raises(partials.PartialError,
                       match=r"partial 'inner' includes itself \(inner -> outer -> inner\)"):
        partials.publish(again)


def test_partials_are_per_workspace(client, settings):
    ours, theirs = factories.workspace(), factories.workspace()
    _partial(theirs, "footer", "THEIRS")
    template = factories.template(ours, publish_it=False, content={"body": "{{> footer}}"})
    with pytest.raises(VersionError, match="footer"):
        publish(TemplateVersion.get(TemplateVersion.template == template))


def test_names_follow_the_rule_and_are_unique_ignoring_case(settings):
    ws = factories.workspace()
    partials.create(ws.id, "Footer")
    with pytest.raises(partials.PartialError, match="already has"):
        partials.create(ws.id, "footer")
    for bad in ("", "a b", "a.b", "x" * 101, "{{x}}"):
        with pytest.raises(partials.PartialError, match="letters, digits"):
            partials.create(ws.id, bad)


def test_preview_counts_the_tags_the_partials_use(client, settings):
    ws = factories.workspace()
    key = factories.api_key(ws)
    _partial(ws, "address", "{{street}}")
    _partial(ws, "footer", "<footer>{{> address}}, {{city}}</footer>")
    template = factories.template(ws, defaults={"to": ["a@example.com"]},
                                  content={"body": "<p>{{name}}</p>{{> footer}}"})
    answer = client.post("/api/v1/notifications/preview", headers={"X-Api-Key": key},
                         json={"tenantId": str(ws.id), "templateId": str(template.id),
                               "tags": [{"key": "city", "value": "Lyon"},
                                        {"key": "spare", "value": "x"}]})
    metadata = answer.json["email"]["variableMetadata"]
    assert sorted(metadata["missingVariables"]) == ["name", "street"]
    assert metadata["unusedVariables"] == ["spare"]
    assert "<footer>, Lyon</footer>" in answer.json["email"]["renderedContent"]["body"]
