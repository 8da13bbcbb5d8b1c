#!/usr/bin/env bash
# manage-services.sh start|stop|restart|status all|server|agent
# Uses systemd units when installed (deploy/systemd/), otherwise runs the
# services in the background with pid files under $HETEROFLOW_RUN_DIR.
# 管理服务：有 systemd 时调用 systemctl，否则以后台进程 + pid 文件方式运行。
set -euo pipefail
ACTION="${1:-}"; TARGET="${2:-all}"
BIN="${HETEROFLOW_BIN:-$(command -v heteroflow || echo "$(cd "$(dirname "$0")/.." && pwd)/bin/heteroflow")}"
RUN_DIR="${HETEROFLOW_RUN_DIR:-${HETEROFLOW_PREFIX:-}/var/run/heteroflow}"
LOG_DIR="${HETEROFLOW_LOG_DIR:-${HETEROFLOW_PREFIX:-}/var/log/heteroflow}"
SERVER_DATA="${HETEROFLOW_DATA_DIR:-${HETEROFLOW_PREFIX:-}/var/lib/heteroflow}"
AGENT_ENV="${HETEROFLOW_AGENT_ENV:-${HETEROFLOW_PREFIX:-}/etc/heteroflow/agent.env}"

usage() { echo "usage: $0 start|stop|restart|status all|server|agent / 用法" >&2; exit 2; }
case "$ACTION" in start|stop|restart|status) ;; *) usage ;; esac
case "$TARGET" in all) SERVICES="server agent" ;; server|agent) SERVICES="$TARGET" ;; *) usage ;; esac

has_unit() { command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ] && systemctl cat "heteroflow-$1.service" >/dev/null 2>&1; }
pidfile() { echo "$RUN_DIR/$1.pid"; }
running() { [ -f "$(pidfile "$1")" ] && kill -0 "$(cat "$(pidfile "$1")")" 2>/dev/null; }

start_one() {
  if has_unit "$1"; then systemctl start "heteroflow-$1.service"; echo "$1: started (systemd) / 已启动"; return; fi
  if running "$1"; then echo "$1: already running (pid $(cat "$(pidfile "$1")")) / 已在运行"; return; fi
  [ -x "$BIN" ] || { echo "$1: heteroflow binary not found ($BIN) / 未找到程序" >&2; return 1; }
  mkdir -p "$RUN_DIR" "$LOG_DIR"
  case "$1" in
    server) mkdir -p "$SERVER_DATA"; nohup "$BIN" server --data-dir "$SERVER_DATA" >>"$LOG_DIR/server.log" 2>&1 & ;;
    agent)
      [ -f "$AGENT_ENV" ] || { echo "agent: $AGENT_ENV missing; install with deploy-agent-all-in-one.sh / 缺少代理配置" >&2; return 1; }
      ( set -a; . "$AGENT_ENV"; set +a; nohup "$BIN" agent >>"$LOG_DIR/agent.log" 2>&1 & echo $! >"$(pidfile agent)" )
      echo "agent: started (pid $(cat "$(pidfile agent)")) / 已启动"; return ;;
  esac
  echo $! >"$(pidfile "$1")"
  echo "$1: started (pid $!) / 已启动"
}

stop_one() {
  if has_unit "$1"; then systemctl stop "heteroflow-$1.service"; echo "$1: stopped (systemd) / 已停止"; return; fi
  if ! running "$1"; then echo "$1: not running / 未运行"; rm -f "$(pidfile "$1")"; return; fi
  local pid; pid="$(cat "$(pidfile "$1")")"
  kill "$pid"
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  rm -f "$(pidfile "$1")"
  echo "$1: stopped / 已停止"
}

status_one() {
  if has_unit "$1"; then systemctl --no-pager status "heteroflow-$1.service" | head -3; return; fi
  if running "$1"; then echo "$1: running (pid $(cat "$(pidfile "$1")")) / 运行中"; else echo "$1: stopped / 已停止"; return 3; fi
}

rc=0
for s in $SERVICES; do
  case "$ACTION" in
    start) start_one "$s" || rc=1 ;;
    stop) stop_one "$s" || rc=1 ;;
    restart) stop_one "$s" || true; start_one "$s" || rc=1 ;;
    status) status_one "$s" || rc=3 ;;
  esac
done
exit $rc
