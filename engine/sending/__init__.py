"""The request path of the API, in the order a send takes it:

- ``admission``: the API key, rate limits and the monthly allowance (``limits``);
- ``validation`` and ``resolution``: field rules, tenancy, template, version, channel rules
  and recipients (``recipients``);
- ``payload``: each part rendered and the channel's payload (``bodies`` for email);
- ``accepting``: the notification row committed and its job enqueued (``idempotency``: the
  Idempotency-Key's record, read and written in the same round trips);
- ``preview``: the email as it would be sent.

Public surface: `send`, `preview`, `validate_key` (the three API operations).
"""

from engine.sending.accepting import Replayed, send
from engine.sending.admission import validate_key
from engine.sending.preview import preview

__all__ = ["Replayed", "preview", "send", "validate_key"]
