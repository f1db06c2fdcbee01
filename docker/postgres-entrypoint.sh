#!/bin/sh
# First start: initdb, a role and database for Prism, the pgvector extension. Then postgres.
set -eu
: "${POSTGRES_USER:=prism}" "${POSTGRES_DB:=prism}"
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
  echo "postgres-entrypoint: set POSTGRES_PASSWORD" >&2
  exit 1
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --username=postgres --auth-local=peer --auth-host=scram-sha-256 \
    --pwfile="$pwfile" --encoding=UTF8 -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /tmp" -w start >/dev/null
  psql -h /tmp -U postgres -v ON_ERROR_STOP=1 -q \
    -v user="$POSTGRES_USER" -v db="$POSTGRES_DB" -v pw="$POSTGRES_PASSWORD" <<'SQL'
CREATE ROLE :"user" LOGIN PASSWORD :'pw';
CREATE DATABASE :"db" OWNER :"user";
\connect :"db"
CREATE EXTENSION IF NOT EXISTS vector;
SQL
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -k /tmp
