"""Pure rules about the shapes of things on the wire: email addresses and E.164 numbers,
suppression keys, the characters a header may hold. No I/O and no models: every layer may use it."""
