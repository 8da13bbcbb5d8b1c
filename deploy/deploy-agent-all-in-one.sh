#!/usr/bin/env bash
# HeteroFlow agent: one-command install / HeteroFlow 节点代理一键部署
#
#   curl -fsSL http://SERVER:5173/deploy-agent-all-in-one.sh | \
#     HETEROFLOW_SERVER=http://SERVER:3333 HETEROFLOW_TOKEN=hfb_… bash
#
# Five steps, each printed as it runs; on failure the script exits non-zero
# and names the step. 五个步骤逐一显示进度；失败时以非零码退出并指出失败步骤。
#   1 system check (OS, kernel, dependencies) / 系统环境检测
#   2 accelerator CLI detection (every vendor) / 加速卡工具检测
#   3 agent download from the server / 下载代理
#   4 config + service registration (systemd; fallback: nohup + pid file) / 配置与服务注册
#   5 health check: the node registered / 健康检查与上线验证
#
# Options (flags or environment):
#   --server URL   (HETEROFLOW_SERVER)   API URL, e.g. http://server:3333
#   --console URL  (HETEROFLOW_CONSOLE)  where to download from (default: server host, port 5173)
#   --token TOKEN  (HETEROFLOW_TOKEN)    one-time bootstrap token
#   --prefix DIR   (HETEROFLOW_PREFIX)   install root (default /); tests use a temporary root
#   --ca-file PEM  (HETEROFLOW_CA_FILE)  CA to trust for an https:// server (mTLS setups)
#   --server-fingerprint SHA256 (HETEROFLOW_SERVER_FINGERPRINT)  pin a self-signed server certificate
#                                    (the agent) / 代理按证书指纹固定信任自签名服务器
#   --server-pubkey-pin sha256//B64 (HETEROFLOW_SERVER_PUBKEY_PIN)  pin a self-signed server's key for
#                                    this script's downloads (curl --pinnedpubkey) / 本脚本下载时固定服务器公钥
#   --no-systemd                         do not register a systemd unit (use the fallback)
#   --timeout SEC                        step 5 wait (default 60)
set -euo pipefail

SERVER="${HETEROFLOW_SERVER:-}"
CONSOLE="${HETEROFLOW_CONSOLE:-}"
TOKEN="${HETEROFLOW_TOKEN:-}"
PREFIX="${HETEROFLOW_PREFIX:-}"
CA_FILE="${HETEROFLOW_CA_FILE:-}"
FINGERPRINT="${HETEROFLOW_SERVER_FINGERPRINT:-}"
PUBKEY_PIN="${HETEROFLOW_SERVER_PUBKEY_PIN:-}"
USE_SYSTEMD=auto
TIMEOUT=60

while [ $# -gt 0 ]; do
  case "$1" in
    --server) SERVER="$2"; shift 2 ;;
    --console) CONSOLE="$2"; shift 2 ;;
    --token) TOKEN="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --ca-file) CA_FILE="$2"; shift 2 ;;
    --server-fingerprint) FINGERPRINT="$2"; shift 2 ;;
    --server-pubkey-pin) PUBKEY_PIN="$2"; shift 2 ;;
    --no-systemd) USE_SYSTEMD=no; shift ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "unknown option / 未知参数: $1" >&2; exit 2 ;;
  esac
done

# How every curl here verifies the server: a CA file when given; else,
# with a key pin, -k plus --pinnedpubkey. -k only drops the CA-chain check
# that a self-signed certificate cannot pass; curl still aborts unless the
# server's public key hashes to the pin, which came with the command from
# the console. That is strictly stronger than trust-on-first-use: nothing
# but the one pinned key is ever accepted, not even on the first contact.
TLS_OPTS=()
if [ -n "$CA_FILE" ]; then
  TLS_OPTS=(--cacert "$CA_FILE")
elif [ -n "$PUBKEY_PIN" ]; then
  case "$PUBKEY_PIN" in sha256//?*) ;; *) echo "--server-pubkey-pin must look like sha256//BASE64 / 公钥固定值格式应为 sha256//BASE64" >&2; exit 2 ;; esac
  TLS_OPTS=(-k --pinnedpubkey "$PUBKEY_PIN")
fi

STEP=0
STEP_NAME=""
step() { STEP=$((STEP + 1)); STEP_NAME="$1"; printf '\n[%d/5] %s\n' "$STEP" "$1"; }
ok()   { printf '      ✓ %s\n' "$*"; }
fail() { printf '\n✗ step %d failed (%s): %s\n✗ 第 %d 步失败（%s）：%s\n' "$STEP" "$STEP_NAME" "$*" "$STEP" "$STEP_NAME" "$*" >&2; exit $((10 + STEP)); }

step "System check / 系统环境检测"
[ -n "$SERVER" ] || fail "--server (HETEROFLOW_SERVER) is required / 需要服务器地址"
case "$SERVER" in http://*|https://*) ;; *) fail "server URL must start with http:// or https:// / 服务器地址需以 http(s):// 开头" ;; esac
SERVER="${SERVER%/}"
OS="$(uname -s)"; KERNEL="$(uname -r)"; ARCH="$(uname -m)"
[ "$OS" = "Linux" ] || fail "this script installs Linux agents (found $OS); see deploy/README.md for Windows / 仅支持 Linux"
case "$ARCH" in x86_64|amd64) GOARCH=amd64 ;; aarch64|arm64) GOARCH=arm64 ;; *) fail "unsupported CPU $ARCH / 不支持的 CPU" ;; esac
KMAJ="${KERNEL%%.*}"
[ "$KMAJ" -ge 3 ] 2>/dev/null || fail "kernel $KERNEL is too old (need ≥ 3.10) / 内核过旧"
for dep in curl sh mkdir chmod; do command -v "$dep" >/dev/null 2>&1 || fail "missing dependency: $dep / 缺少依赖"; done
ok "$OS $KERNEL $ARCH, curl $(curl --version | head -1 | cut -d' ' -f2)"

step "Accelerator CLIs / 加速卡工具检测"
FOUND=""
for tool in nvidia-smi rocm-smi hy-smi npu-smi cnmon xpu-smi xpu_smi mthreads-gmi brsmi ixsmi mx-smi efsmi; do
  if command -v "$tool" >/dev/null 2>&1; then FOUND="$FOUND $tool"; ok "found $tool ($(command -v "$tool"))"; fi
done
[ -n "$FOUND" ] || ok "no accelerator CLI on PATH: the node joins as CPU-only / 未发现加速卡工具，按纯 CPU 节点接入"

step "Download agent / 下载代理"
if [ -z "$CONSOLE" ]; then
  hostport="${SERVER#*://}"; host="${hostport%%/*}"; host="${host%:*}"
  CONSOLE="${SERVER%%://*}://$host:5173"
fi
BIN_DIR="$PREFIX/usr/local/bin"
mkdir -p "$BIN_DIR" || fail "cannot create $BIN_DIR"
URL="$CONSOLE/downloads/heteroflow-linux-$GOARCH"
curl -fsSL --retry 3 ${TLS_OPTS[@]+"${TLS_OPTS[@]}"} -o "$BIN_DIR/heteroflow.download" "$URL" || fail "download $URL failed / 下载失败"
chmod 0755 "$BIN_DIR/heteroflow.download"
"$BIN_DIR/heteroflow.download" version >/dev/null 2>&1 || fail "downloaded file is not a working heteroflow binary / 下载的文件无法运行"
mv "$BIN_DIR/heteroflow.download" "$BIN_DIR/heteroflow"
ok "$("$BIN_DIR/heteroflow" version)"

step "Config and service / 配置与服务注册"
CONF_DIR="$PREFIX/etc/heteroflow"
DATA_DIR="$PREFIX/var/lib/heteroflow-agent"
mkdir -p "$CONF_DIR" "$DATA_DIR" || fail "cannot create $CONF_DIR or $DATA_DIR"
# Traversable, not listable: tasks reach their own DATA_DIR/work/<task> only.
chmod 0711 "$DATA_DIR"
# Tasks run as a dedicated unprivileged account (the agent's default
# without one is nobody); never as root.
RUN_AS=""
if [ -z "$PREFIX" ] && [ "$(id -u)" = 0 ] && command -v useradd >/dev/null 2>&1; then
  id heteroflow-task >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin heteroflow-task \
    || fail "cannot create the task account heteroflow-task / 无法创建任务账户"
  RUN_AS=heteroflow-task
  ok "tasks run as heteroflow-task / 任务以 heteroflow-task 账户运行"
fi
ENV_FILE="$CONF_DIR/agent.env"
if [ -f "$DATA_DIR/credentials.json" ]; then
  ok "already enrolled ($DATA_DIR/credentials.json): the bootstrap token is not needed / 已注册"
else
  [ -n "$TOKEN" ] || fail "--token (HETEROFLOW_TOKEN) is required for a new node / 新节点需要引导令牌"
fi
umask 077
cat >"$ENV_FILE" <<ENV
# Written by deploy-agent-all-in-one.sh. The token is only used on the first start.
HETEROFLOW_SERVER=$SERVER
HETEROFLOW_TOKEN=$TOKEN
HETEROFLOW_AGENT_DATA_DIR=$DATA_DIR
HETEROFLOW_CA_FILE=$CA_FILE
HETEROFLOW_SERVER_FINGERPRINT=$FINGERPRINT
HETEROFLOW_RUN_AS=$RUN_AS
ENV
ok "wrote $ENV_FILE"
if [ "$USE_SYSTEMD" = auto ]; then
  if [ -z "$PREFIX" ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then USE_SYSTEMD=yes; else USE_SYSTEMD=no; fi
fi
if [ "$USE_SYSTEMD" = yes ]; then
  cat >/etc/systemd/system/heteroflow-agent.service <<UNIT
[Unit]
Description=HeteroFlow node agent
After=network-online.target
Wants=network-online.target

[Service]
EnvironmentFile=$ENV_FILE
ExecStart=$BIN_DIR/heteroflow agent --data-dir $DATA_DIR
Restart=always
RestartSec=5
KillMode=process

[Install]
WantedBy=multi-user.target
UNIT
  systemctl daemon-reload && systemctl enable --now heteroflow-agent.service || fail "systemctl could not start heteroflow-agent"
  ok "systemd unit heteroflow-agent.service enabled and started"
else
  # Fallback without systemd (containers, test roots): a detached process
  # with a pid file; deploy/manage-services.sh start|stop|status agent uses it.
  RUN_DIR="$PREFIX/var/run/heteroflow"; LOG_DIR="$PREFIX/var/log/heteroflow"
  mkdir -p "$RUN_DIR" "$LOG_DIR"
  if [ -f "$RUN_DIR/agent.pid" ] && kill -0 "$(cat "$RUN_DIR/agent.pid")" 2>/dev/null; then
    kill "$(cat "$RUN_DIR/agent.pid")" || true; sleep 1
  fi
  ( set -a; . "$ENV_FILE"; set +a
    nohup "$BIN_DIR/heteroflow" agent --data-dir "$DATA_DIR" >>"$LOG_DIR/agent.log" 2>&1 &
    echo $! >"$RUN_DIR/agent.pid" )
  ok "no systemd: started in the background (pid $(cat "$RUN_DIR/agent.pid"), log $LOG_DIR/agent.log) / 无 systemd，已后台启动"
fi

step "Health check / 健康检查与上线验证"
deadline=$(( $(date +%s) + TIMEOUT ))
until [ -f "$DATA_DIR/credentials.json" ]; do
  if [ "$USE_SYSTEMD" = no ] && ! kill -0 "$(cat "$PREFIX/var/run/heteroflow/agent.pid")" 2>/dev/null; then
    fail "the agent exited; see $PREFIX/var/log/heteroflow/agent.log: $(tail -3 "$PREFIX/var/log/heteroflow/agent.log" 2>/dev/null | tr '\n' ' ')"
  fi
  [ "$(date +%s)" -lt "$deadline" ] || fail "the agent did not enroll within ${TIMEOUT}s / 代理未在限定时间内注册"
  sleep 1
done
NODE_ID="$(sed -n 's/.*"node_id": *"\([^"]*\)".*/\1/p' "$DATA_DIR/credentials.json")"
KEY="$(sed -n 's/.*"api_key": *"\([^"]*\)".*/\1/p' "$DATA_DIR/credentials.json")"
# The agent's own key proves the server accepts the node: a heartbeat
# answer with state online is the registration check.
STATE=""
until [ "$STATE" = online ]; do
  STATE="$(curl -fsS ${TLS_OPTS[@]+"${TLS_OPTS[@]}"} -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d '{"health":"ok","running":[]}' "$SERVER/api/v1/agents/heartbeat" 2>/dev/null | sed -n 's/.*"state":"\([a-z]*\)".*/\1/p')" || true
  [ "$STATE" = online ] && break
  [ "$(date +%s)" -lt "$deadline" ] || fail "node $NODE_ID is not online on $SERVER / 节点未上线"
  sleep 1
done
ok "node $NODE_ID is registered and online / 节点已注册并在线"
sed -i 's/^HETEROFLOW_TOKEN=.*/HETEROFLOW_TOKEN=/' "$ENV_FILE"
printf '\nDone / 完成: node %s → %s\n' "$NODE_ID" "$SERVER"
