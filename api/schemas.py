"""Marshmallow schemas under the spec's names; they document the API (/openapi/v1.json).

Request rules are checked by engine.sending.validation so that every broken rule gets its errorCode.
"""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields


class RequestSchema(Schema):
    """A request object: members it does not name are ignored, as the spec's ASP.NET
    original ignores them (a newer client's member reaches an older server harmlessly);
    the OpenAPI document then does not claim additionalProperties: false."""

    class Meta:
        unknown = EXCLUDE


class TagDto(RequestSchema):
    key = fields.String(required=True, metadata={"example": "name"})
    value = fields.String(required=True, metadata={"example": "Ada"})


class AttachmentDto(RequestSchema):
    name = fields.String(required=True, metadata={"example": "invoice.pdf"})
    content = fields.String(required=True, metadata={"description": "base64",
                                                     "example": "JVBERi0xLjQK"})
    contentType = fields.String(required=True, metadata={"example": "application/pdf"})
    cid = fields.String(allow_none=True, load_default=None)


class EmailOptionsDto(RequestSchema):
    to = fields.List(fields.String(), allow_none=True)
    cc = fields.List(fields.String(), allow_none=True)
    bcc = fields.List(fields.String(), allow_none=True)
    overrideRecipients = fields.List(fields.String(), allow_none=True)
    fromAddress = fields.String(allow_none=True)
    replyTo = fields.String(allow_none=True)
    attachments = fields.List(fields.Nested(AttachmentDto), allow_none=True)
    customHeaders = fields.Dict(keys=fields.String(), values=fields.String(), allow_none=True)
    trackOpens = fields.Boolean(allow_none=True)
    trackClicks = fields.Boolean(allow_none=True)
    priority = fields.String(allow_none=True, metadata={"enum": ["Normal", "High", "Low", None]})
    sensitivity = fields.String(allow_none=True, metadata={
        "enum": ["Normal", "Personal", "Private", "Confidential", None]})
    requestDeliveryReceipt = fields.Boolean(load_default=False)
    requestReadReceipt = fields.Boolean(load_default=False)


class SmsOptionsDto(RequestSchema):
    fromNumber = fields.String(allow_none=True)
    to = fields.List(fields.String(), allow_none=True)
    overrideRecipients = fields.List(fields.String(), allow_none=True)


class WebhookOptionsDto(RequestSchema):
    urlOverride = fields.String(allow_none=True)
    headers = fields.Dict(keys=fields.String(), values=fields.String(), allow_none=True)


class NotificationRequest(RequestSchema):
    tenantId = fields.UUID(required=True,
                           metadata={"example": "2b1c6a8e-4d0f-4c53-9d7e-2f5b0c8a9e11"})
    templateId = fields.UUID(required=True,
                             metadata={"example": "7d3e1f20-1c2b-4a5d-8e9f-0a1b2c3d4e5f"})
    tags = fields.List(fields.Nested(TagDto), required=True)
    versionNumber = fields.Integer(allow_none=True, metadata={"format": "int32"})
    emailOptions = fields.Nested(EmailOptionsDto, allow_none=True)
    smsOptions = fields.Nested(SmsOptionsDto, allow_none=True)
    webhookOptions = fields.Nested(WebhookOptionsDto, allow_none=True)


class SendResponse(Schema):
    accepted = fields.Boolean(required=True)
    correlationId = fields.String(required=True)
    message = fields.String(required=True)


class ValidationErrorDto(Schema):
    field = fields.String(required=True)
    message = fields.String(required=True)


class TemplateMetadataDto(Schema):
    templateId = fields.UUID(required=True)
    versionNumber = fields.Integer(required=True, metadata={"format": "int32"})
    emailType = fields.String(required=True)
    notificationType = fields.String(required=True)
    # Added to the spec's members (a response object is open to new members; docs/api.md):
    variant = fields.String(required=True, allow_none=True, metadata={
        "description": "the language variant that rendered (its BCP 47 tag, picked by the "
                       "tag `locale`), null for the version's own text", "example": None})


class EmailSenderDto(Schema):
    fromAddress = fields.String(required=True)
    fromName = fields.String(required=True, allow_none=True)
    replyTo = fields.String(required=True, allow_none=True)


class ResolvedRecipientsDto(Schema):
    to = fields.List(fields.String(), required=True)
    cc = fields.List(fields.String(), required=True)
    bcc = fields.List(fields.String(), required=True)
    wasOverridden = fields.Boolean(required=True)


class RenderedContentDto(Schema):
    subject = fields.String(required=True, allow_none=True)
    body = fields.String(required=True, allow_none=True)
    htmlHead = fields.String(required=True, allow_none=True)


class FinalBodiesDto(Schema):
    htmlBody = fields.String(required=True)
    textBody = fields.String(required=True, allow_none=True)


class VariableMetadataDto(Schema):
    providedVariables = fields.List(fields.String(), required=True)
    missingVariables = fields.List(fields.String(), required=True)
    unusedVariables = fields.List(fields.String(), required=True)


class BatchingInfoDto(Schema):
    emailType = fields.String(required=True)
    messageCount = fields.Integer(required=True, metadata={"format": "int32"})
    batchingStrategy = fields.String(required=True)


class AttachmentMetadataDto(Schema):
    name = fields.String(required=True)
    contentType = fields.String(required=True)
    sizeBytes = fields.Integer(required=True, metadata={"format": "int64"})
    contentId = fields.String(required=True, allow_none=True)


class TrackingSettingsDto(Schema):
    trackOpens = fields.Boolean(required=True)
    trackClicks = fields.Boolean(required=True)


class RenderingErrorDto(Schema):
    templatePart = fields.String(required=True)
    message = fields.String(required=True)


class EmailPreviewResultDto(Schema):
    success = fields.Boolean(required=True)
    templateMetadata = fields.Nested(TemplateMetadataDto, required=True)
    sender = fields.Nested(EmailSenderDto, required=True)
    recipients = fields.Nested(ResolvedRecipientsDto, required=True)
    renderedContent = fields.Nested(RenderedContentDto, required=True)
    finalBodies = fields.Nested(FinalBodiesDto, required=True, allow_none=True)
    variableMetadata = fields.Nested(VariableMetadataDto, required=True)
    batchingInfo = fields.Nested(BatchingInfoDto, required=True, allow_none=True)
    attachments = fields.List(fields.Nested(AttachmentMetadataDto), required=True)
    trackingSettings = fields.Nested(TrackingSettingsDto, required=True)
    customHeaders = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    renderingErrors = fields.List(fields.Nested(RenderingErrorDto), required=True)
    errorMessage = fields.String(required=True, allow_none=True)


class PreviewResponse(Schema):
    email = fields.Nested(EmailPreviewResultDto, required=True, allow_none=True)
    validationErrors = fields.List(fields.Nested(ValidationErrorDto), required=True)


class ApiKeyValidationResponse(Schema):
    isValid = fields.Boolean(required=True)
    tenantId = fields.UUID(required=True, allow_none=True)
    apiKeyId = fields.UUID(required=True, allow_none=True)
    name = fields.String(required=True, allow_none=True)
    status = fields.String(required=True, allow_none=True,
                           metadata={"enum": ["active", "revoked", "expired", None]})
    createdAt = fields.String(required=True, allow_none=True, metadata={"format": "date-time"})
    lastUsedAt = fields.String(required=True, allow_none=True, metadata={"format": "date-time"})
    expiresAt = fields.String(required=True, allow_none=True, metadata={"format": "date-time"})
    revokedAt = fields.String(required=True, allow_none=True, metadata={"format": "date-time"})


class ProblemDetails(Schema):
    type = fields.String(allow_none=True)
    title = fields.String(allow_none=True)
    status = fields.Integer(allow_none=True, metadata={"format": "int32"})
    detail = fields.String(allow_none=True)
    instance = fields.String(allow_none=True)
    errorCode = fields.String(allow_none=True)
    correlationId = fields.String(allow_none=True)
    traceId = fields.String(allow_none=True)
    errors = fields.Dict(keys=fields.String(), values=fields.List(fields.String()),
                         allow_none=True)
    errorCodes = fields.List(fields.String(), allow_none=True)
