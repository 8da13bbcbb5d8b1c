#!/usr/bin/env bash
# End-to-end test of deploy-agent-all-in-one.sh on this machine: a real
# server on free loopback ports, simulated NVIDIA CLIs (fakesmi) on PATH, the
# script installing into a temporary root without systemd, then checks that
# the node registered with the right devices. Exit 0 only when all pass.
#   HETEROFLOW_BIN=bin/heteroflow deploy/test-deploy-agent.sh
set -euo pipefail
BIN="$(readlink -f "${HETEROFLOW_BIN:-bin/heteroflow}")"
HERE="$(cd "$(dirname "$0")" && pwd)"
[ -x "$BIN" ] || { echo "build first: make go (or set HETEROFLOW_BIN)" >&2; exit 2; }
ROOT="$(mktemp -d)"
cleanup() {
  [ -f "$ROOT/prefix/var/run/heteroflow/agent.pid" ] && kill "$(cat "$ROOT/prefix/var/run/heteroflow/agent.pid")" 2>/dev/null || true
  [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$ROOT"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
API_PORT="$(port)"; CONSOLE_PORT="$(port)"
export HETEROFLOW_ADMIN_PASSWORD='Deploy-Test-Pass-1!'
"$BIN" server --data-dir "$ROOT/server" --api-addr "127.0.0.1:$API_PORT" --console-addr "127.0.0.1:$CONSOLE_PORT" \
  >"$ROOT/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$API_PORT/health" >/dev/null 2>&1 && break; sleep 0.2; done
API="http://127.0.0.1:$API_PORT"
JWT="$(curl -fsS -H 'Content-Type: application/json' -d "{\"username\":\"admin\",\"password\":\"$HETEROFLOW_ADMIN_PASSWORD\"}" \
  "$API/api/v1/auth/login" | sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')"
TOKEN="$(curl -fsS -H "Authorization: Bearer $JWT" -H 'Content-Type: application/json' -d '{"description":"deploy test"}' \
  "$API/api/v1/bootstrap-tokens" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')"
[ -n "$TOKEN" ] || { echo "FAIL: no bootstrap token"; exit 1; }

# Simulated node: 2× H100 through fakesmi wrappers first on PATH.
mkdir -p "$ROOT/fake"
printf '{"vendor":"nvidia","model":"NVIDIA H100 80GB HBM3","count":2,"memory_mib":81559}' >"$ROOT/fake/profile.json"
"$BIN" fakesmi install --dir "$ROOT/fake/bin" --profile "$ROOT/fake/profile.json" --state "$ROOT/fake/state.json" >/dev/null

# A failing run names its step: no token → step 4.
set +e
PATH="$ROOT/fake/bin:$PATH" bash "$HERE/deploy-agent-all-in-one.sh" --server "$API" \
  --console "http://127.0.0.1:$CONSOLE_PORT" --prefix "$ROOT/bad" >"$ROOT/bad.log" 2>&1
rc=$?
set -e
[ "$rc" = 14 ] && grep -q "step 4 failed" "$ROOT/bad.log" || { echo "FAIL: expected step 4 failure, rc=$rc"; cat "$ROOT/bad.log"; exit 1; }

# The script as served by the console port.
curl -fsSL "http://127.0.0.1:$CONSOLE_PORT/deploy-agent-all-in-one.sh" -o "$ROOT/served.sh"
cmp -s "$ROOT/served.sh" "$HERE/deploy-agent-all-in-one.sh" || { echo "FAIL: served script differs"; exit 1; }
PATH="$ROOT/fake/bin:$PATH" HETEROFLOW_TOKEN="$TOKEN" bash "$ROOT/served.sh" --server "$API" \
  --console "http://127.0.0.1:$CONSOLE_PORT" --prefix "$ROOT/prefix" --timeout 60 | tee "$ROOT/ok.log"
NODES="$(curl -fsS -H "Authorization: Bearer $JWT" "$API/api/v1/nodes")"
echo "$NODES" | grep -q '"vendors":\["nvidia"\]' || { echo "FAIL: node without nvidia: $NODES"; exit 1; }
echo "$NODES" | grep -q '"device_count":2' || { echo "FAIL: expected 2 devices: $NODES"; exit 1; }
[ "$(stat -c %a "$ROOT/prefix/var/lib/heteroflow-agent/credentials.json")" = 600 ] || { echo "FAIL: credentials not 0600"; exit 1; }
grep -q '^HETEROFLOW_TOKEN=$' "$ROOT/prefix/etc/heteroflow/agent.env" || { echo "FAIL: token left in agent.env"; exit 1; }
echo "PASS: deploy script installed an agent into $ROOT/prefix and the node registered with 2 NVIDIA devices"
