"""Bounce and complaint reports as mail servers write them."""

from __future__ import annotations


def dsn(recipient: str, message_id: str, *, action: str = "failed", status: str = "5.1.1",
        to: str = "bounces@example") -> bytes:
    """A Postfix-style RFC 3464 DSN with the original message's headers returned."""
    return (f"""From: MAILER-DAEMON@mx.example.net (Mail Delivery System)
To: {to}
Subject: Undelivered Mail Returned to Sender
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B0UND"

--B0UND
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.example.net.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

<{recipient}>: host mx.example.net said: 550 {status} User unknown

--B0UND
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net
X-Postfix-Queue-ID: 4F2A1C0A3
Original-Envelope-Id: {message_id.strip("<>")}
Arrival-Date: Fri, 20 Nov 2026 10:00:00 +0000 (UTC)

Final-Recipient: rfc822; {recipient}
Original-Recipient: rfc822;{recipient}
Action: {action}
Status: {status}
Remote-MTA: dns; mx.example.net
Diagnostic-Code: smtp; 550 {status} <{recipient}>: Recipient address rejected: User
    unknown in local recipient table

--B0UND
Content-Type: text/rfc822-headers

From: Example <hello@example.com>
To: {recipient}
Subject: Hello Ada
Message-ID: {message_id}

--B0UND--
""").replace("\n", "\r\n").encode()


def arf(recipient: str, message_id: str, to: str = "bounces@example") -> bytes:
    """An RFC 5965 abuse report with the original message attached."""
    return (f"""From: feedback@isp.example
To: {to}
Subject: FW: Hello Ada
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"

--ARF
Content-Type: text/plain

This is an email abuse report for an email message received from IP 192.0.2.1.

--ARF
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: SomeGenerator/1.0
Version: 1
Original-Mail-From: <bounces+x@example>
Original-Rcpt-To: <{recipient}>
Arrival-Date: Fri, 20 Nov 2026 10:00:00 +0000

--ARF
Content-Type: message/rfc822

From: Example <hello@example.com>
To: {recipient}
Subject: Hello Ada
Message-ID: {message_id}

Hello Ada
--ARF--
""").replace("\n", "\r\n").encode()


QMAIL = b"""From: MAILER-DAEMON@mx.example.net
To: bounces@example
Subject: failure notice

Hi. This is the qmail-send program at mx.example.net.
I'm afraid I wasn't able to deliver your message to the following addresses.
This is a permanent error; I've given up. Sorry it didn't work out.

<bob@example.net>:
Sorry, no mailbox here by that name. (#5.1.1)

--- Below this line is a copy of the message.

From: hello@example.com
To: bob@example.net
Subject: Hello
"""
