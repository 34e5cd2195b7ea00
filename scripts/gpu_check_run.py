"""The GPU machine's half of scripts/gpu-check.sh: numerics and timings.

For each prepared artifact (`gpu-check.sh prepare`): random inputs (fixed
seed), `ingot run --device cpu` as the reference, `ingot run --device cuda`
compared by relative error, then both timed with --repeat, and the same
computation in PyTorch on the GPU (with the same host<->device copies) as
the peer in the same run. Writes gpu-check.json and gpu-check.md to OUT.

    python3 scripts/gpu_check_run.py INGOT PREPARED_DIR OUT_DIR
"""
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# libdevice's f32 functions are within 2 ulp of the correctly rounded
# result and the CPU's within a few; chains of 8 ops stay under 1e-5
# relative (norm of the difference over norm of the reference).
RTOL = 1e-5
SIZES = {"numerics": 257, "bandwidth": 65536}  # rows of 1024 f32 columns
REPEAT = 20


def run(ingot, art, x, work, device, repeat=0):
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "x.npy", x)
    cmd = [ingot, "run", str(art), "--input", f"x={work / 'x.npy'}",
           "--output-dir", str(work / "out"), "--device", device]
    if repeat:
        cmd += ["--repeat", str(repeat)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{proc.stderr}")
    m = re.search(r"median ([0-9.]+) ms, min ([0-9.]+) ms", proc.stderr)
    return np.load(work / "out" / "y.npy"), (float(m.group(1)) if m else None)


def torch_reference(name, x):
    """The same computation in PyTorch on the GPU, timed with the copies
    ingot's run makes (pageable host memory both ways)."""
    import torch
    sys.path.insert(0, str(Path(__file__).parent))
    import gpu_check_models as models
    import onnx
    from onnx import numpy_helper
    graph = models.MODELS[name]().graph
    w = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).cuda()
         for t in graph.initializer}

    def compute(t):
        if name == "scale_shift":
            return t * w["scale"] + w["shift"]
        if name == "gelu_bias":
            b = t + w["bias"]
            return b * (torch.erf(b / w["sqrt2"]) + w["one"]) * w["half"]
        s = torch.tanh(t * w["k"])
        return torch.sin(torch.nn.functional.softplus(
            torch.sqrt(torch.sigmoid(torch.log(torch.exp(s))))))

    def once():
        y = compute(torch.from_numpy(x).cuda()).cpu()
        torch.cuda.synchronize()
        return y
    once()
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        once()
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[len(times) // 2]


def check(ingot, prepared, out):
    rng = np.random.default_rng(20261201)
    rows = []
    for art in sorted((prepared / "models").glob("*.ingot")):
        name = art.stem
        for size, n in SIZES.items():
            x = rng.uniform(-2, 2, (n, 1024)).astype(np.float32)
            work = out / "work" / f"{name}-{size}"
            try:  # one model's failure must not hide the others' results
                ref, cpu_ms = run(ingot, art, x, work / "cpu", "cpu",
                                  REPEAT if size == "bandwidth" else 0)
                got, gpu_ms = run(ingot, art, x, work / "cuda", "cuda",
                                  REPEAT if size == "bandwidth" else 0)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"{name}: FAILED\n{e}", flush=True)
                rows.append({"model": name, "rows": n, "rel_err": float("nan"),
                             "ok": False, "error": str(e)[-2000:]})
                continue
            err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
            row = {"model": name, "rows": n, "rel_err": err,
                   "ok": bool(err <= RTOL and got.shape == ref.shape)}
            if size == "bandwidth":
                row.update(cpu_ms=cpu_ms, cuda_ms=gpu_ms,
                           torch_ms=torch_reference(name, x),
                           bytes=int(x.nbytes * 2))
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def ms(value):
    return "" if value is None else f"{value:.1f}"


def report(rows, out):
    (out / "gpu-check.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = ["| model | rows×1024 | rel err vs CPU | ok | ingot cuda ms | "
             "torch ms | ingot cpu ms |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['rows']} | {r['rel_err']:.2e} | "
                     f"{'yes' if r['ok'] else 'NO'} | {ms(r.get('cuda_ms'))} | "
                     f"{ms(r.get('torch_ms'))} | {ms(r.get('cpu_ms'))} |")
    lines.append("")
    lines.append("Times: median of %d whole runs with host<->device copies "
                 "of the input and output (pageable memory), both for ingot "
                 "and torch." % REPEAT)
    (out / "gpu-check.md").write_text("\n".join(lines) + "\n")
    return all(r["ok"] for r in rows)


def main(argv):
    ingot, prepared, out = argv[1], Path(argv[2]), Path(argv[3])
    out.mkdir(parents=True, exist_ok=True)
    ok = report(check(ingot, prepared, out), out)
    print((out / "gpu-check.md").read_text())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
