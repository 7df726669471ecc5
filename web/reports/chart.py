"""The by-day chart as server-rendered SVG: bars of accepted notifications with their
delivered part, no script and no library (the page's CSP runs none). Its axes' labels are
HTML beside the drawing, not SVG text: a drawing scaled to a phone's width scaled its
12-unit text to 5 px."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

WIDTH, HEIGHT, AXIS = 720, 140, 0


@dataclass
class Bar:
    x: float
    width: float
    accepted_y: float
    accepted_height: float
    delivered_y: float
    delivered_height: float
    label: str  # the bar's <title>: its day and counts


@dataclass
class Chart:
    width: int
    height: int
    bars: list[Bar]
    peak: int
    first: str
    last: str
    ticks: list[int]  # the y-axis' labels, top to bottom (the peak, its half, 0)
    days: list[str]  # the x-axis' labels: the first day, the middle one, the last


def _day(day: dt.date) -> str:
    return f"{day.day} {day:%b}"


def by_day(days: list[tuple[dt.date, dict[str, int]]]) -> Chart:
    """One bar per day, scaled to the busiest day."""
    peak = max((counts["Accepted"] for _, counts in days), default=0)
    slot = WIDTH / max(len(days), 1)
    usable = HEIGHT - AXIS
    bars = []
    for i, (day, counts) in enumerate(days):
        accepted = counts["Accepted"] / peak * usable if peak else 0.0
        delivered = counts["Delivered"] / peak * usable if peak else 0.0
        bars.append(Bar(round(i * slot + slot * 0.1, 2), round(slot * 0.8, 2),
                        round(usable - accepted, 2), round(accepted, 2),
                        round(usable - delivered, 2), round(delivered, 2),
                        f"{day.isoformat()}: {counts['Accepted']} accepted, "
                        f"{counts['Delivered']} delivered, {counts['Bounced']} bounced, "
                        f"{counts['Failed']} failed"))
    labels = [_day(days[i][0]) for i in sorted({0, len(days) // 2, len(days) - 1})] \
        if days else []
    return Chart(WIDTH, HEIGHT, bars, peak, days[0][0].isoformat() if days else "",
                 days[-1][0].isoformat() if days else "",
                 [peak, peak // 2, 0] if peak > 1 else [peak, 0], labels)
