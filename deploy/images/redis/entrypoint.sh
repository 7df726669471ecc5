#!/bin/sh
# Redis with a password and protected mode, its settings read from standard input so the
# password stays off the command line (ps) and off the read-only root file system. The
# password comes from REDIS_PASSWORD (deploy/make-env writes it to redis.env); without
# one Redis refuses to start rather than serve anyone who reaches its port.
set -eu
if [ -z "${REDIS_PASSWORD:-}" ]; then
  echo "redis-entrypoint: REDIS_PASSWORD is required (deploy/make-env writes redis.env)" >&2
  exit 2
fi
exec redis-server - "$@" <<CONF
requirepass $REDIS_PASSWORD
protected-mode yes
bind 0.0.0.0 -::*
dir /data
appendonly yes
CONF
