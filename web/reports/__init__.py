"""The Reports pages (docs/reports.md): counts, the by-day chart, the feed, its CSV export and a
notification's timeline, thin views over engine/reports."""
