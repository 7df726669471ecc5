"""Sender verification (spec 8.3, 8.4; docs/senders.md): domains by DNS, single addresses by
a confirmation email, the plan's allowances, and what verified mail carries (DKIM, the
return path, the postal footer)."""
