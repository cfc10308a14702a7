#!/usr/bin/env bash
# The paper's scale on a GPU, in one prepared run that fits a 12-minute device loan (issue 25):
#   bash scripts/record_gpu_learning.sh OUTDIR [TOTAL_SECONDS] [MACHINE]
# 1. many runs stacked against one at a time at the paper's learning settings (d=4, k=6, n=512, batch 32; 64
#    runs in one stack, the one-at-a-time rate from 2 runs; 200 steps each, extrapolated per hour), into
#    OUTDIR/sweep_gpu.json (commit it as results/sweep_gpu.json);
# 2. Figure 10a (the registry's sweep fig10 at d=4, paper scale: OH, BN, NA x NE, L2 x tau 1, 0.25, 0.14, 0.1 x
#    10 seeds, n=512, 10,000 steps: the configs of fig10a-paper, stacked as widely as the GPU allows) with what is
#    left of TOTAL_SECONDS (default 720) less a minute for copying, by python -m lloydbook.record: stacks sized by
#    the GPU's free memory, trained in chunks of 1,000 steps, into the checkout's recorded store
#    results/recorded/MACHINE (default h200), resuming the checkpoints committed there. Each stack's finished runs
#    are added to the store as it ends (the runs it held are kept); unfinished ones leave their checkpoints in
#    results/recorded/MACHINE/checkpoints. The folder is then copied to OUTDIR/recorded/MACHINE: commit it as
#    results/recorded/MACHINE/ (a later loan resumes it with the same command). TF32 is off. Each file names the
#    hardware it ran on.
set -uo pipefail
out=${1:?usage: bash scripts/record_gpu_learning.sh OUTDIR [TOTAL_SECONDS] [MACHINE]}
total=${2:-720}
store=results/recorded/${3:-h200}
start=$(date +%s)
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" OMP_NUM_THREADS=1
py=${PYTHON:-python3}
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
$py -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"

echo "== bench sweep ($(date +%T))"
$py -m lloydlib bench sweep --device cuda --d 4 --k 6 --n 512 --batch 32 --runs 64 --sequential-runs 2 \
    --steps 200 --per-hour-steps 10000 --out "$out/sweep_gpu.json"

left=$(( total - ($(date +%s) - start) - 60 ))
echo "== Figure 10a, at most ${left} s of training ($(date +%T))"
if [ "$left" -gt 30 ]; then
  $py -m lloydbook.record fig10 --where d=4 --scale paper --budget "$left" --chunk 1000 --device cuda \
      --workers 1 --out "$store"
fi
if [ -d "$store" ]; then mkdir -p "$out/recorded" && cp -r "$store" "$out/recorded/"; fi
echo "== done in $(( $(date +%s) - start )) s ($(date +%T))"
