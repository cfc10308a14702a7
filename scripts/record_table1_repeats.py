"""Chapter 03's CPU Table 1 measurement, repeated: how far its result moves from one build to the next.

Runs the chapter's Table 1 measurement (the reference form, ``lloydbook.scales`` settings of ``--scale``,
CPU time, one torch thread) ``--repeats`` times, each a fresh ``lloydlib.bench.grid`` call on inputs drawn
from its own seed, and writes each result as ``seed-NN.json`` (the ``bench table1`` format) into
``--out``. ``lloydbook.leanness.cpu_repeats`` reads them and ``build_drift`` says how far a cell's median
speed-up moves from one build to the next, which one build's interval does not cover.

    OMP_NUM_THREADS=1 python scripts/record_table1_repeats.py --scale ci --repeats 20 \
        --out results/table1_cpu_repeats
"""

import argparse
import json
import os
from pathlib import Path

from lloydbook import leanness as lean
from lloydbook.scales import params
from lloydlib import bench


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", default="ci", choices=["ci", "default"])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    P = params("leanness", args.scale)
    args.out.mkdir(parents=True, exist_ok=True)
    for seed in range(args.first_seed, args.first_seed + args.repeats):
        load = os.getloadavg()[0]
        with lean.torch_threads(P.threads):
            result = bench.grid([32], P.table1_ks, n=P.n, batch=P.table1_batch, warmup=P.table1_warmup,
                                reps=P.table1_reps, impl="reference", memory=False, clock=P.clock, seed=seed,
                                device="cpu", passes=lean.T1_PASSES)  # fmt: skip
        result["benchmark"] = "table1"
        result["load_average"] = {"before": load, "after": os.getloadavg()[0]}
        result["config"]["scale"] = args.scale
        (args.out / f"seed-{seed:02d}.json").write_text(json.dumps(result, indent=1) + "\n")
        rows = lean.rows_by_k(result)
        print(seed, {k: str(lean.speedup(rows[k], "forward", 1e-3)) for k in rows}, flush=True)


if __name__ == "__main__":
    main()
