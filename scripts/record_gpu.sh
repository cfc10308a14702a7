#!/usr/bin/env bash
# Record this book's GPU results in OUTDIR (run from the repository root on a machine with a CUDA GPU):
#   bash scripts/record_gpu.sh OUTDIR [TRAIN_SECONDS]
# 1. the benchmarks of "What leanness buys" at the paper's settings (n=1024, B=32, 10 warm-up and 30 timed
#    repetitions): the training step, Table 1 for both implementations, and Figure 1's grid;
#    and many runs stacked against one at a time at the paper's learning settings (d=4, k=6, n=512, B=32,
#    64 runs in one stack; the one-at-a-time rate from 2 runs), 200 steps each, extrapolated per hour;
# 2. as much of the paper-scale tau sweep of "Learning one Lloyd step" (d=4, tau 1 and 0.1, OH/BN/NA,
#    NE/L2, seeds 0-2, n=512, 10,000 steps) as fits in TRAIN_SECONDS (default 240), in one process with one
#    CPU thread (about 95 s a run on an H200; processes sharing the GPU only slow each other down); the
#    finished runs are packed as OUTDIR/gpu_runs.tar.gz, a cache root to unpack under results/recorded/<machine>/
#    (the chapters find it with lloydbook.results.recorded_run_dirs()). Training writes into a temporary
#    cache root given with --cache-dir, never into $LLOYD_CACHE or ~/.cache/lloydlib.
# Each JSON file and each run names the hardware it ran on. Commit the outputs under results/.
set -uo pipefail
out=${1:?usage: bash scripts/record_gpu.sh OUTDIR [TRAIN_SECONDS]}
budget=${2:-240}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-python3}
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
$py -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"

echo "== bench train-step ($(date +%T))"
$py -m lloydlib bench train-step --device cuda --embedding BN --n 512 --d 32 --k 10 --batch 32 \
    --warmup 10 --reps 30 --out "$out/train_step_gpu.json"
for impl in lloydlib reference; do
  echo "== bench table1 --impl $impl ($(date +%T))"
  $py -m lloydlib bench table1 --device cuda --impl "$impl" --out "$out/table1_gpu_$impl.json"
done
echo "== bench grid ($(date +%T))"
$py -m lloydlib bench grid --device cuda --impl lloydlib --out "$out/grid_gpu_lloydlib.json"

echo "== bench sweep ($(date +%T))"
$py -m lloydlib bench sweep --device cuda --d 4 --k 6 --n 512 --batch 32 --runs 64 --sequential-runs 2 \
    --steps 200 --per-hour-steps 10000 --out "$out/sweep_gpu.json"

echo "== train, at most $budget s ($(date +%T))"
cache=$(mktemp -d)
OMP_NUM_THREADS=1 timeout "$budget" $py -m lloydlib train --d 4 --tau 1 0.1 --embedding OH BN NA --loss NE L2 --seed 0 1 2 \
    --device cuda --no-progress --cache-dir "$cache"
echo "== train stopped with status $? ($(date +%T)); finished runs:"
(cd "$cache" && ls runs/*/result.pt 2>/dev/null | wc -l && tar czf "$out/gpu_runs.tar.gz" runs/*/result.json runs/*/result.pt)
echo "== done ($(date +%T))"
