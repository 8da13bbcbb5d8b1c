#!/usr/bin/env bash
# Hand-run check on a real NVIDIA machine: QoS Silver through CUDA MPS holds
# its limits. It does what the agent does for two Silver tasks on one GPU —
# one MPS control daemon for the GPU (its own pipe and log directories, the
# GPU alone visible), two clients with their own
# CUDA_MPS_ACTIVE_THREAD_PERCENTAGE and CUDA_MPS_PINNED_DEVICE_MEM_LIMIT —
# and shows that each client sees its share of the SMs and cannot allocate
# past its memory limit. Exit status 0 only when every limit held.
#
# 在真实 NVIDIA 机器上手动运行：验证 CUDA MPS 的 Silver 限额（线程百分比、显存上限）确实生效。
#
# Needs: nvidia-smi, nvidia-cuda-mps-control, nvcc (CUDA toolkit), a GPU not
# in MIG mode, and the right to start an MPS daemon (root, or the GPU's only
# user). Usage: deploy/checks/mps-limits.sh [GPU-UUID]
set -euo pipefail

for t in nvidia-smi nvidia-cuda-mps-control nvcc; do
  command -v "$t" >/dev/null || { echo "missing $t / 缺少 $t" >&2; exit 2; }
done
GPU="${1:-$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -n1)}"
[ -n "$GPU" ] || { echo "no GPU / 没有 GPU" >&2; exit 2; }
if nvidia-smi -i "$GPU" --query-gpu=mig.mode.current --format=csv,noheader | grep -q Enabled; then
  echo "GPU $GPU is in MIG mode: MPS Silver is not offered there / MIG 模式下不提供 MPS" >&2; exit 2
fi

WORK="$(mktemp -d)"
export CUDA_MPS_PIPE_DIRECTORY="$WORK/pipe" CUDA_MPS_LOG_DIRECTORY="$WORK/log"
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
cleanup() {
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/probe.cu" <<'CU'
// probe <alloc MiB>: prints the SMs this client may use and whether an
// allocation of the given size succeeds; spins a kernel briefly so two
// clients overlap on the MPS server.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
__global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}
int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoull(argv[1], nullptr, 10) : 0;
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) {
    printf("error no-device\n");
    return 3;
  }
  spin<<<sms, 128>>>(200000000LL);
  cudaDeviceSynchronize();
  void *p = nullptr;
  cudaError_t e = cudaMalloc(&p, mib << 20);
  printf("sms %d alloc %zu %s\n", sms, mib, e == cudaSuccess ? "ok" : "refused");
  if (p) cudaFree(p);
  return 0;
}
CU
nvcc -O2 -o "$WORK/probe" "$WORK/probe.cu"
TOTAL_SMS="$("$WORK/probe" 0 | awk '{print $2}')"   # before MPS: the whole GPU

CUDA_VISIBLE_DEVICES="$GPU" nvidia-cuda-mps-control -d
echo "MPS control daemon started for $GPU (pipe $CUDA_MPS_PIPE_DIRECTORY) / MPS 守护进程已启动"

client() { # name percent limit-MiB alloc-MiB
  CUDA_VISIBLE_DEVICES="$GPU" CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="$2" \
    CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="0=${3}M" "$WORK/probe" "$4" >"$WORK/$1.out"
}
# Two clients at once, each once under and once over its memory limit.
client a-under 25 2048 1024 & client b-under 50 4096 3072 & wait
client a-over 25 2048 4096 & client b-over 50 4096 8192 & wait

fail=0
check() { # file want-alloc max-sms
  read -r _ sms _ _ res <"$WORK/$1.out"
  printf '%-8s sms %3s/%s alloc %-7s' "$1" "$sms" "$TOTAL_SMS" "$res"
  if [ "$res" != "$2" ] || [ "$sms" -gt "$3" ]; then echo "  FAIL"; fail=1; else echo "  ok"; fi
}
# Allowed SMs: the percentage of the GPU's, rounded up to whole SMs.
check a-under ok $(( (TOTAL_SMS * 25 + 99) / 100 ))
check b-under ok $(( (TOTAL_SMS * 50 + 99) / 100 ))
check a-over refused $(( (TOTAL_SMS * 25 + 99) / 100 ))
check b-over refused $(( (TOTAL_SMS * 50 + 99) / 100 ))
[ "$fail" = 0 ] && echo "MPS limits held / MPS 限额生效" || echo "an MPS limit did not hold / MPS 限额未生效" >&2
exit "$fail"
