#!/usr/bin/env bash
# Install what the real-VS-Code end-to-end test needs, once, into .cache/ (reused when present):
# code-server 4.100.3 (VS Code 1.100.3, runs on Node 20) from the npm registry, playwright-core, and
# Debian's Chromium. The four fixes code-server's postinstall needs offline are from
# ../shared/clients.md: libkrb5-dev + pkg-config (kerberos), a seeded ripgrep download cache,
# npm_config_yes (node-gyp through npx) and --unsafe-perm; node-gyp takes headers from nodedir.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${GRAPHMEND_CACHE:-$PWD/.cache}
CS_VERSION=4.100.3
mkdir -p "$CACHE"

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
need=()
command -v rg >/dev/null || need+=(ripgrep)
[ -x /usr/lib/chromium/chromium ] || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ ! -x "$CACHE/code-server/node_modules/.bin/code-server" ]; then
  seed=$(mktemp -d)
  mkdir -p "${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
  cp "$(command -v rg)" "$seed/rg"
  tar czf "${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$seed" rg
  mkdir -p "$CACHE/code-server"
  (
    cd "$CACHE/code-server"
    [ -f package.json ] || npm init -y >/dev/null
    nodedir=$(dirname "$(dirname "$(command -v node)")")
    npm_config_yes=true npm_config_nodedir="$nodedir" npm install --no-audit --no-fund --unsafe-perm "code-server@$CS_VERSION" >/dev/null
  )
fi
if [ ! -d "$CACHE/playwright/node_modules/playwright-core" ]; then
  mkdir -p "$CACHE/playwright"
  (cd "$CACHE/playwright" && ([ -f package.json ] || npm init -y >/dev/null) && npm install --no-audit --no-fund playwright-core@1.65.1 >/dev/null)
fi
"$CACHE/code-server/node_modules/.bin/code-server" --version | head -1
