#!/bin/sh
# The official postgres image's contract, as far as Skiff uses it: on an empty $PGDATA,
# initdb with POSTGRES_USER (default postgres) as superuser and POSTGRES_PASSWORD, create
# POSTGRES_DB (default: the user), accept password (scram) logins from any address; then
# run `postgres` as the postgres user, listening on all addresses.
set -eu
if [ "${1:-postgres}" != postgres ]; then exec "$@"; fi
shift || true
: "${PGDATA:=/var/lib/postgresql/data}"
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" postgres "$@"
fi
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo 'error: POSTGRES_PASSWORD is not set' >&2; exit 1; }
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /var/run/postgresql" -w start >/dev/null
  if [ "$db" != postgres ]; then
    # The name is a psql variable quoted by psql (:"db", read from standard input), never spliced.
    echo 'CREATE DATABASE :"db";' | psql -q -v ON_ERROR_STOP=1 -h /var/run/postgresql -U "$user" -d postgres -v db="$db" >/dev/null
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -k /var/run/postgresql "$@"
