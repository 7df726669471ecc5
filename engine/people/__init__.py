"""People of the web application: users, memberships and roles, invitations, password
resets, web sessions and the audit log. The web views and `herald users` call these
services; nothing here knows Flask."""
