#!/usr/bin/env bash
# gpu.sh: proves the cuda accelerator plugin on a real NVIDIA GPU machine (driver, MPS
# tools and PyTorch as python3; no Docker needed). The gpu_check example discovers the GPUs
# through NVML, starts one MPS control daemon, runs two concurrent 0.25-fGPU PyTorch
# processes with the plugin's environment and shows each is held to its MPS memory limit
# (about a quarter of the GPU) while a whole-GPU process sees all of it, then stops MPS.
#
# Usage, from the repository root: bench/gpu.sh [PATH_TO_gpu_check]
#   (default target/release/examples/gpu_check, built with
#    cargo build --profile release -p bai-agent --example gpu_check)
# Output goes to the terminal and to ${OUT:-.}/gpu.log; the last line is a summary JSON.
set -euo pipefail

bin=${1:-target/release/examples/gpu_check}
log=${OUT:-.}/gpu.log
mkdir -p "$(dirname "$log")"
{
    echo "# nvidia-smi -L"
    nvidia-smi -L
    echo "# $bin"
    "$bin"
} 2>&1 | tee "$log"
