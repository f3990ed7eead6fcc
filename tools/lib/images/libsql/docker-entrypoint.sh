#!/bin/sh
# The official libsql-server image's contract, as far as Skiff uses it: `/bin/sqld` (the
# default command) listens for HTTP on SQLD_HTTP_LISTEN_ADDR and keeps its database at
# SQLD_DB_PATH (relative to /var/lib/sqld, the working directory); a primary
# (SQLD_NODE=primary, the default) also listens for replicas on SQLD_GRPC_LISTEN_ADDR.
# sqld reads the other SQLD_* variables (SQLD_HTTP_AUTH among them) itself. Any other
# command runs as given.
set -eu
if [ "$#" -gt 0 ] && [ "$1" != /bin/sqld ] && [ "$1" != sqld ]; then exec "$@"; fi
[ "$#" -gt 0 ] && shift
if [ "${SQLD_NODE:-primary}" = primary ]; then
  set -- --grpc-listen-addr "${SQLD_GRPC_LISTEN_ADDR:-0.0.0.0:5001}" "$@"
fi
exec /bin/sqld --http-listen-addr "${SQLD_HTTP_LISTEN_ADDR:-0.0.0.0:8080}" --db-path "${SQLD_DB_PATH:-iku.db}" "$@"
