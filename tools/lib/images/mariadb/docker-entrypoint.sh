#!/bin/sh
# The official mariadb image's contract, as far as Skiff uses it: on an empty data directory,
# create the system tables, set MARIADB_ROOT_PASSWORD for root (local and remote), create
# MARIADB_DATABASE and MARIADB_USER/MARIADB_PASSWORD with all rights on it; then run mariadbd
# as the mysql user on 0.0.0.0:3306. Values reach SQL only as quoted, escaped literals
# (printed with printf: dash's echo would interpret their backslashes).
set -eu
if [ "${1:-mariadbd}" != mariadbd ]; then exec "$@"; fi
shift || true
datadir=/var/lib/mysql
socket=/run/mysqld/mysqld.sock
mkdir -p /run/mysqld "$datadir" && chown mysql:mysql /run/mysqld "$datadir"
# A SQL string literal: backslashes and quotes escaped.
literal() { printf "'%s'" "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")"; }
# A SQL identifier: backticks doubled.
ident() { printf '`%s`' "$(printf '%s' "$1" | sed -e 's/`/``/g')"; }
if [ ! -d "$datadir/mysql" ]; then
  [ -n "${MARIADB_ROOT_PASSWORD:-}" ] || { echo 'error: MARIADB_ROOT_PASSWORD is not set' >&2; exit 1; }
  mariadb-install-db --user=mysql --datadir="$datadir" --auth-root-authentication-method=normal --skip-test-db >/dev/null
  mariadbd --user=mysql --datadir="$datadir" --skip-networking --socket="$socket" &
  pid=$!
  i=0
  until mariadb-admin --socket="$socket" ping --silent >/dev/null 2>&1; do
    i=$((i + 1)); [ "$i" -lt 300 ] || { echo 'error: mariadbd did not start' >&2; exit 1; }
    sleep 0.1
  done
  {
    printf "%s\n" "SET @@SESSION.SQL_LOG_BIN=0;"
    printf "%s\n" "DELETE FROM mysql.global_priv WHERE user NOT IN ('mysql.sys', 'mariadb.sys', 'root') OR host NOT IN ('localhost');"
    printf "%s\n" "ALTER USER 'root'@'localhost' IDENTIFIED BY $(literal "$MARIADB_ROOT_PASSWORD");"
    printf "%s\n" "CREATE USER 'root'@'%' IDENTIFIED BY $(literal "$MARIADB_ROOT_PASSWORD");"
    printf "%s\n" "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
    if [ -n "${MARIADB_DATABASE:-}" ]; then printf "%s\n" "CREATE DATABASE IF NOT EXISTS $(ident "$MARIADB_DATABASE");"; fi
    if [ -n "${MARIADB_USER:-}" ] && [ -n "${MARIADB_PASSWORD:-}" ]; then
      printf "%s\n" "CREATE USER $(literal "$MARIADB_USER")@'%' IDENTIFIED BY $(literal "$MARIADB_PASSWORD");"
      if [ -n "${MARIADB_DATABASE:-}" ]; then printf "%s\n" "GRANT ALL ON $(ident "$MARIADB_DATABASE").* TO $(literal "$MARIADB_USER")@'%';"; fi
    fi
    printf "%s\n" "FLUSH PRIVILEGES;"
  } | mariadb --socket="$socket" -uroot --binary-mode
  MYSQL_PWD="$MARIADB_ROOT_PASSWORD" mariadb-admin --socket="$socket" -uroot shutdown
  wait "$pid" || true
fi
exec mariadbd --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 --port=3306 --socket="$socket" "$@"
