"""apply_tracking on ordinary and hostile HTML: which links are signed, where the pixel goes."""

from __future__ import annotations

import html

import pytest

from engine.delivery.tracking import (
    MAX_TRACKED_LINKS,
    TrackedHtml,
    apply_tracking,
    click_url,
    open_url,
)

NID = "c6ce4503-3479-45c1-8904-923a76027755"


def _signed(url: str) -> str:
    return html.escape(click_url(NID, None, url), quote=True)


def test_http_links_are_signed_and_other_links_are_left_alone(settings):
    body = ('<p><a href="https://example.org/x?a=1&amp;b=2">x</a> <A class=c HREF = \'http://e.test\'>'
            '<a href="mailto:a@example.net">m</a> <a name=top>t</a></p>')
    tracked = apply_tracking(body, notification_id=NID, track_opens=False, track_clicks=True)
    assert tracked == (f'<p><a href="{_signed("https://example.org/x?a=1&b=2")}">x</a> '
                       f"<A class=c HREF = '{_signed('http://e.test')}'>"
                       '<a href="mailto:a@example.net">m</a> <a name=top>t</a></p>')


# Each was quadratic: every "<a" read on to the next ">" (here only one, at the very end), so
# 65 KB took seconds and these ~1 MB would take many minutes. Scanned once, they finish
# well inside the suite's timeout, unchanged, and the link after the flood is still found.
FLOODS = ["<a href", '<a href="https://e.test/', "<a x='", "<a\thref = "]


@pytest.mark.parametrize("unit", FLOODS, ids=repr)
def test_a_flood_of_unclosed_links_is_scanned_once_and_changes_nothing(settings, unit):
    flood = unit * (1_000_000 // len(unit))
    body = flood + '><a href="https://example.org/after">after</a>'
    tracked = apply_tracking(body, notification_id=NID, track_opens=True, track_clicks=True)
    pixel = (f'<img src="{html.escape(open_url(NID, None))}" width="1" height="1" alt="" '
             'style="display:none">')
    assert tracked == f'{flood}><a href="{_signed("https://example.org/after")}">after</a>{pixel}'


def test_click_tracking_rewrites_at_most_a_thousand_links_a_message(settings):
    # Past the thousandth the links stay as written: the message and the signing work of
    # each recipient stay bounded, whatever the body holds.
    body = "".join(f'<a href="https://shop.example/{i}">{i}</a>' for i in range(1500))
    tracked = apply_tracking(body, notification_id=NID, track_opens=False,
                             track_clicks=True, recipient="ada@example.net")
    assert tracked.count("/t/c/") == MAX_TRACKED_LINKS == 1000
    assert 'href="https://shop.example/999"' not in tracked
    assert 'href="https://shop.example/1000"' in tracked
    assert tracked.count('href="https://shop.example/') == 500


def test_a_body_worked_out_once_is_signed_for_each_recipient_as_alone(settings):
    # The pixel before the first </body> even where a tag around it holds one, links before
    # and after it, a link left alone: what one TrackedHtml renders per recipient is what
    # apply_tracking gives that recipient.
    body = ('<p><a title=x href="https://example.org/a">a</a><a </body><b></BODY >'
            '<a href=\'http://e.test/b?x=1&amp;y=2\'>b</a><a href="mailto:m@e.test">m</a>')
    once = TrackedHtml(body, track_opens=True, track_clicks=True)
    for recipient in ("ada@example.net", "bob@example.net", None):
        alone = apply_tracking(body, notification_id=NID, track_opens=True, track_clicks=True,
                               recipient=recipient)
        assert once.render(NID, recipient) == alone
        assert alone.count("/t/c/") == 2 and alone.count("<img ") == 1
        assert alone.index('style="display:none"></body>') < alone.index("</BODY >")


def test_a_body_without_tracking_is_given_back_as_it_is() -> None:
    body = '<html><body><a href="https://example.com/a">a</a></body></html>'
    assert apply_tracking(body, notification_id=None, track_opens=False,
                          track_clicks=False) is body
    assert TrackedHtml(body, track_opens=False, track_clicks=False).render(None, None) == body
