# Shared by tools/up and tools/test: install what is missing, idempotently.
# Sourced, not run. Needs root for apt-get (as on the project's machines and in CI).

export NX_DAEMON=false
export NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false

APT_UPDATED=""
apt_install() {
  if [ -z "$APT_UPDATED" ]; then
    echo "==> apt-get update" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    APT_UPDATED=1
  fi
  echo "==> apt-get install $*" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

ensure_node_deps() {
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    # `npm install` from the lock file rather than `npm ci`: npm leaves other platforms'
    # optional binaries (@bufbuild/buf-*) out of the lock, and `npm ci` refuses that.
    echo "==> npm install" >&2
    npm install --no-audit --no-fund --no-save --loglevel=error >&2
  fi
}

ensure_postgres_binaries() {
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    apt_install postgresql
  fi
  command -v runuser >/dev/null || apt_install util-linux
}

# How tools/up and tools/bench run the bundle. With the embedded database, --liftoff-only keeps
# PGlite's WebAssembly on V8's baseline compiler: it idles ~50 MB smaller with the same API
# throughput (CPU-heavy queries run ~25% slower); a 4 MB young generation saves ~10 MB more.
CONTROL_PLANE_CMD=(node --liftoff-only --max-semi-space-size=4 dist/control-plane/main.mjs)

# Bundles the control plane into one file (dist/control-plane/main.mjs): it starts faster and
# idles in about half the memory of running the TypeScript sources through a loader.
build_control_plane() {
  node_modules/.bin/esbuild apps/control-plane/src/main.ts --bundle --platform=node --format=esm \
    --target=node20 --outfile=dist/control-plane/main.mjs --log-level=warning \
    --external:@electric-sql/pglite --external:kysely-pglite-dialect --external:pg-native \
    --banner:js="import{createRequire as __skiffRequire}from'node:module';const require=__skiffRequire(import.meta.url);"
}

# How tools/up runs the agent's bundle. (V8 flags such as a smaller young generation, a single
# GC thread or --optimize-for-size changed its idle memory by under 1 MB: none is set.)
AGENT_CMD=(node --lite-mode --max-semi-space-size=1 dist/agent/main.mjs)  # no optimising compiler: the agent waits far more than it computes, and idles ~12 MB smaller

# Bundles the agent into one file (dist/agent/main.mjs), as build_control_plane does: it idles
# at ~53 MB RSS instead of ~100 MB through tsx (`tools/bench agent` measures it beside a bare
# `node`, ~37 MB here, most of it the node binary's pages). docker-modem's ssh:// transport
# (ssh2, with native and WebAssembly crypto, ~8 MB) is replaced by a stub: the agent talks to
# Docker over its unix socket. Whitespace and syntax are minified (names are kept): V8 keeps the
# whole source in the heap, ~1 MB less.
build_agent() {
  node_modules/.bin/esbuild apps/agent/src/main.ts --bundle --platform=node --format=esm \
    --target=node20 --outfile=dist/agent/main.mjs --log-level=warning \
    --minify-whitespace --minify-syntax --legal-comments=none \
    --alias:ssh2=./tools/lib/agent-bundle/ssh2.cjs \
    --banner:js="import{createRequire as __skiffRequire}from'node:module';const require=__skiffRequire(import.meta.url);"
}
