#!/usr/bin/env bash
# Real VS Code (code-server) + headless Chromium + the GraphMend .vsix + `graphmend lsp`.
# Usage: vscode_e2e.sh WORKSPACE PYTHON VSIX SHOT_DIR   (code-server from tools/setup-code-server.sh)
set -euo pipefail
WS=$1; PY=$2; VSIX=$3; SHOTS=$4
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${GRAPHMEND_CACHE:-$(cd "$HERE/../.." && pwd)/.cache}
CS=$CACHE/code-server/node_modules/.bin/code-server
PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
DATA=$(mktemp -d)
mkdir -p "$DATA/user/User" "$DATA/ext" "$SHOTS"
# PY empty: no interpreter is named, so the extension uses python3 and, finding no graphmend
# there, sets up the server it ships (MODE=first-start)
cat > "$DATA/user/User/settings.json" <<JSON
{ "graphmend.python": "$PY", "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none", "telemetry.telemetryLevel": "off", "workbench.tips.enabled": false,
  "update.mode": "none", "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false,
  "git.enabled": false, "files.autoSave": "off", "window.commandCenter": false,
  "workbench.editorAssociations": { "*.ipynb": "jupyter-notebook" } }
JSON
"$CS" --extensions-dir "$DATA/ext" --user-data-dir "$DATA/user" --install-extension "$VSIX" >/dev/null
"$CS" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry --disable-update-check \
      --disable-workspace-trust --extensions-dir "$DATA/ext" --user-data-dir "$DATA/user" \
      "$WS" > "$DATA/code-server.log" 2>&1 &
CS_PID=$!
trap 'kill $CS_PID 2>/dev/null || true; cp -r "$DATA/user/logs" "$SHOTS/logs" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.5; done
NODE_PATH=$CACHE/playwright/node_modules MODE=${MODE:-} CS_URL="http://127.0.0.1:$PORT/?folder=$WS" WS="$WS" SHOT_DIR="$SHOTS" \
  node "$HERE/vscode_e2e.js"
echo "vscode e2e OK"
