#!/usr/bin/env bash
# `make run`: the server on embedded defaults plus two simulated heterogeneous
# nodes (8× NVIDIA H100 with MIG, 8× Huawei Ascend 910B) whose vendor CLIs
# are fakesmi wrappers and whose simulated load follows the tasks they run.
# Ctrl-C stops everything. / 启动服务器与两个模拟异构节点，Ctrl-C 全部停止。
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${HETEROFLOW_BIN:-$PWD/bin/heteroflow}"
DATA="${HETEROFLOW_DEV_DIR:-$PWD/data/dev}"
API_ADDR="${HETEROFLOW_API_ADDR:-127.0.0.1:3333}"
CONSOLE_ADDR="${HETEROFLOW_CONSOLE_ADDR:-127.0.0.1:5173}"
[ -x "$BIN" ] || { echo "missing $BIN: run make build / 请先 make build" >&2; exit 1; }
mkdir -p "$DATA"
# Under root the simulated agents run tasks as the unprivileged account
# `nobody`, which must be able to enter the agents' data folders.
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && ! runuser -u nobody -- test -x "$DATA"; then
  echo "tasks run as 'nobody', which cannot enter $DATA (a parent folder is not o+x):" >&2
  echo "  set HETEROFLOW_DEV_DIR to a folder it can reach, e.g. HETEROFLOW_DEV_DIR=/var/tmp/heteroflow-dev make run" >&2
  echo "任务以 nobody 运行，无法进入 $DATA；请用 HETEROFLOW_DEV_DIR 指定可访问的目录" >&2
  exit 1
fi
PW_FILE="$DATA/admin-password"
if [ -z "${HETEROFLOW_ADMIN_PASSWORD:-}" ]; then
  [ -f "$PW_FILE" ] || { head -c 18 /dev/urandom | base64 | tr -d '/+=' | sed 's/$/Aa1!/' >"$PW_FILE"; chmod 600 "$PW_FILE"; }
  HETEROFLOW_ADMIN_PASSWORD="$(cat "$PW_FILE")"
  PW_SOURCE="$PW_FILE"
else
  PW_SOURCE="\$HETEROFLOW_ADMIN_PASSWORD"
fi
export HETEROFLOW_ADMIN_PASSWORD

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

"$BIN" server --data-dir "$DATA/server" --api-addr "$API_ADDR" --console-addr "$CONSOLE_ADDR" \
  >>"$DATA/server.log" 2>&1 &
SERVER_PID=$!
PIDS+=("$SERVER_PID")
API="http://$API_ADDR"
# Stop waiting as soon as the server has exited (a bad password, a port in
# use) and show why: its last lines, not only where the log is.
for _ in $(seq 1 150); do
  curl -fsS "$API/health" >/dev/null 2>&1 && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.2
done
if ! curl -fsS "$API/health" >/dev/null 2>&1; then
  echo "server did not start; last lines of $DATA/server.log: / 服务器未启动，$DATA/server.log 的最后几行：" >&2
  grep -v ' level=INFO ' "$DATA/server.log" | tail -n 5 >&2 || true
  exit 1
fi
JWT="$(curl -fsS -H 'Content-Type: application/json' \
  -d "{\"username\":\"admin\",\"password\":\"$HETEROFLOW_ADMIN_PASSWORD\"}" "$API/api/v1/auth/login" |
  sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')"
[ -n "$JWT" ] || { echo "admin login failed (password source: $PW_SOURCE) / 管理员登录失败" >&2; exit 1; }

node() { # name profile-json
  local name="$1" dir="$DATA/$1"
  mkdir -p "$dir"
  printf '%s' "$2" >"$dir/profile.json"
  "$BIN" fakesmi install --dir "$dir/bin" --profile "$dir/profile.json" --state "$dir/state.json" --log "$dir/cli.log" >/dev/null
  local token=""
  if [ ! -f "$dir/agent/credentials.json" ]; then
    token="$(curl -fsS -H "Authorization: Bearer $JWT" -H 'Content-Type: application/json' \
      -d "{\"description\":\"make run: $name\"}" "$API/api/v1/bootstrap-tokens" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')"
  fi
  PATH="$dir/bin:$PATH" HETEROFLOW_FAKESMI_STATE="$dir/state.json" \
    "$BIN" agent --server "$API" --token "$token" --data-dir "$dir/agent" --name "$name" --label "sim=$name" >>"$dir/agent.log" 2>&1 &
  PIDS+=($!)
}
node h100 '{"vendor":"nvidia","model":"NVIDIA H100 80GB HBM3","count":8,"memory_mib":81559,"partitions":[{"device":0,"profile":"3g.40gb","id":1},{"device":0,"profile":"3g.40gb","id":2}]}'
node ascend910b '{"vendor":"ascend","model":"910B3","count":8,"memory_mib":65536}'

cat <<MSG

HeteroFlow is running / 已启动
  console 控制台:  http://$CONSOLE_ADDR   (user admin, password in $PW_SOURCE / 密码见 $PW_SOURCE)
  API:             $API/api/v1/   health: $API/health
  nodes 节点:      h100 (8× H100, MIG), ascend910b (8× Ascend 910B) — logs in $DATA/*/agent.log
Ctrl-C stops everything / Ctrl-C 停止
MSG
wait -n "${PIDS[@]}"
echo "a process exited; stopping (see $DATA/*.log) / 有进程退出，正在停止" >&2
exit 1
