"""/openapi/v1.json: a valid OpenAPI 3 document that says what the API does."""

from __future__ import annotations

from openapi_spec_validator import validate

DOCUMENTED = {
    ("/api/v1/notifications/send", "post"): {"202", "400", "401", "403", "404", "409", "413",
                                             "422", "429", "500", "503"},
    ("/api/v1/notifications/preview", "post"): {"200", "400", "401", "403", "404", "413", "429",
                                                "500", "503"},
    ("/api/v1/api-keys/validate", "get"): {"200", "401", "429", "500", "503"},
}
SPEC_SCHEMAS = {"NotificationRequest", "TagDto", "EmailOptionsDto", "AttachmentDto",
                "SmsOptionsDto", "WebhookOptionsDto", "SendResponse", "PreviewResponse",
                "EmailPreviewResultDto", "ValidationErrorDto", "ProblemDetails",
                "TemplateMetadataDto", "EmailSenderDto", "ResolvedRecipientsDto",
                "RenderedContentDto", "FinalBodiesDto", "VariableMetadataDto", "BatchingInfoDto",
                "AttachmentMetadataDto", "TrackingSettingsDto", "RenderingErrorDto"}


def test_document_is_valid_openapi_3_version_1_0_0(client):
    response = client.get("/openapi/v1.json")
    assert response.status_code == 200
    doc = response.json
    validate(doc)
    assert doc["openapi"].startswith("3.") and doc["info"]["version"] == "1.0.0"
    assert doc["components"]["securitySchemes"]["ApiKey"] == {
        "type": "apiKey", "in": "header", "name": "X-Api-Key"}
    assert set(doc["components"]["schemas"]) >= SPEC_SCHEMAS


def test_every_documented_status_has_a_schema_and_an_example(client):
    doc = client.get("/openapi/v1.json").json
    for (path, method), statuses in DOCUMENTED.items():
        responses = doc["paths"][path][method]["responses"]
        assert set(responses) == statuses, (path, method)
        for status, response in responses.items():
            (content,) = response["content"].values()
            assert "schema" in content and "example" in content, (path, status)


def test_docs_page_is_served_without_external_resources(client):
    page = client.get("/docs")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "/openapi/v1.json" in text
    assert "http://" not in text and "https://" not in text


def test_examples_match_what_each_operation_can_answer(client):
    doc = client.get("/openapi/v1.json").json
    paths = doc["paths"]
    for path, method in DOCUMENTED:
        limited = paths[path][method]["responses"]["429"]
        assert "Retry-After" in limited["headers"], path
        unavailable = paths[path][method]["responses"]["503"]
        assert "Retry-After" in unavailable["headers"], path
        example = unavailable["content"]["application/problem+json"]["example"]
        assert example["errorCode"] == "service.unavailable", path
    preview = paths["/api/v1/notifications/preview"]["post"]["responses"]
    validate_key = paths["/api/v1/api-keys/validate"]["get"]["responses"]
    # Preview is never counted against the allowance; validate only knows a missing header.
    assert preview["429"]["content"]["application/problem+json"]["example"]["errorCode"] is None
    assert validate_key["401"]["content"]["application/problem+json"]["example"][
        "errorCode"] == "api_keys.missing"
    assert "PaginationMetadata" not in doc["components"]["schemas"]


def test_request_objects_take_unknown_members_as_the_document_says(client, tenant):
    doc = client.get("/openapi/v1.json").json
    requests = ("NotificationRequest", "TagDto", "EmailOptionsDto", "AttachmentDto",
                "SmsOptionsDto", "WebhookOptionsDto")
    for name in requests:
        assert doc["components"]["schemas"][name].get("additionalProperties") is not False
    body = {**tenant["body"], "future": 1,
            "tags": [{"key": "name", "value": "Ada", "future": 1}],
            "emailOptions": {"future": 1, "attachments": [
                {"name": "a.txt", "content": "aGk=", "contentType": "text/plain", "future": 1}]},
            "smsOptions": {"future": 1}, "webhookOptions": {"future": 1}}
    response = client.post("/api/v1/notifications/send", json=body,
                           headers={"X-Api-Key": tenant["key"]})
    assert response.status_code == 202, response.json


def test_send_documents_the_idempotency_key_header_and_its_answers(client):
    send = client.get("/openapi/v1.json").json["paths"]["/api/v1/notifications/send"]["post"]
    (header,) = [p for p in send["parameters"] if p["name"] == "Idempotency-Key"]
    assert header["in"] == "header" and header["required"] is False
    assert header["schema"]["minLength"] == 1 and header["schema"]["maxLength"] == 255
    responses = send["responses"]
    assert "Idempotent-Replayed" in responses["202"]["headers"]
    assert "Retry-After" in responses["409"]["headers"]
    conflict = responses["409"]["content"]["application/problem+json"]["example"]
    assert conflict["errorCode"] == "notifications.idempotency_key_in_use"
    assert "idempotency_key_reused" in responses["422"]["description"]
