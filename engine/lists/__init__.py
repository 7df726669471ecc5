"""Send to a list (docs/web.md, "Send to a list"): a file of recipients read, checked row by
row against a template, kept, then sent as one job, each row through the send's own accept
path (engine/sending/accepting.py) on the bulk queue.

- ``reading``: the CSV file into a header and numbered rows (the header is row 1);
- ``checking``: every bad row named, the template's tags, suppressions, the allowance;
- ``uploads``: a file saved to disk, checked in ``background``'s pool, kept as a RecipientList;
- ``expiry``: unsent lists removed after their time;
- ``allowance``: the list's units of the monthly allowance, taken at once, given back;
- ``sending``: ``Send N notifications``, the job that expands the list in batches;
- ``cancelling``: ``Cancel list``, its queued notifications stopped too;
- ``scheduling``: ``Schedule``, a list started at its time by ``sweeping``, the lists' pass;
- ``zones``: time zones, and each row's own local time from a ``time zone`` column;
- ``recovery``: a sending list whose job was lost or whose worker died enqueued again;
- ``progress``: a list's counts, as reports count them.
"""
