"""Signing in and out, invitations, password resets and the person's own account."""
