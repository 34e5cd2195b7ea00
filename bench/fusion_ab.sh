#!/bin/bash
# Fusion and weight packing, on and off, measured in one run (issue 6).
# usage: bench/fusion_ab.sh HF_DIR OUT_DIR [ROUNDS]
# Compiles HF_DIR four ways (fused; unfused; fused + packed; nothing), prints
# compile wall time and peak RSS, kernels per step and arena figures from
# `ingot inspect --json`, then alternates `ingot bench --pp 256 --tg 128`
# over the artifacts ROUNDS times (the machine is shared: alternate, never
# run one configuration's repetitions back to back).
set -euo pipefail
model=$1 out=$2 rounds=${3:-3}
ingot=${INGOT:-build/bin/ingot}
mkdir -p "$out"
declare -A flags=([fused]="" [unfused]="--fusion=off"
                  [fused-packed]="--pack-weights=on")
names=(fused unfused fused-packed)
for n in "${names[@]}"; do
  /usr/bin/time -f "$n: compile %e s wall, peak RSS %M KB" \
    "$ingot" compile "$model" -o "$out/$n.ingot" ${flags[$n]}
  "$ingot" inspect "$out/$n.ingot" --json > "$out/$n.inspect.json"
done
for r in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    "$ingot" bench "$out/$n.ingot" --pp 256 --tg 128 -r 3 --threads 2 \
      --no-probe --json "$out/$n.bench.$r.json" > /dev/null 2>&1
  done
done
python3 - "$out" "${names[@]}" <<'PY'
import collections, glob, json, statistics, sys
out, names = sys.argv[1], sys.argv[2:]
for n in names:
    d = json.load(open(f"{out}/{n}.inspect.json"))
    m = d["memory"]
    k = collections.Counter(s["kernel"] for s in d["steps"])
    pp, tg = [], []
    for f in sorted(glob.glob(f"{out}/{n}.bench.*.json")):
        b = json.load(open(f))
        pp += b["pp"]["runs_tokens_per_s"]
        tg += b["tg"]["runs_tokens_per_s"]
    print(f"{n}: {len(d['steps'])} kernels/step {dict(k)}")
    print(f"  weights {m['weights_bytes']} B, arena {m['arena_bytes']} B "
          f"(lower bound {m['arena_lower_bound_bytes']} B)")
    print(f"  pp256 median {statistics.median(pp):.1f} tok/s "
          f"[{min(pp):.1f}, {max(pp):.1f}], tg128 median "
          f"{statistics.median(tg):.1f} tok/s [{min(tg):.1f}, {max(tg):.1f}]")
PY
