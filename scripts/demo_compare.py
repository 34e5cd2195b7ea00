"""The body of `make demo` (scripts/demo.sh): build the fixture transformer
block, compile it with ingot, run it, check it against onnxruntime and report
times, error and memory. Exit status 1 if any step fails or the relative
error exceeds the e2e tests' float32 tolerance."""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "test" / "fixtures"), str(ROOT / "test" / "e2e")]
import transformer_block  # noqa: E402
from ingot_testlib import F32_RTOL, ort_run, relative_error  # noqa: E402

BATCH, SEQ = 2, 48


def timed(cmd):
    """Runs cmd; returns seconds taken. Exits with its message on failure."""
    start = time.perf_counter()
    proc = subprocess.run([str(c) for c in cmd], capture_output=True,
                          text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"demo: FAILED (exit {proc.returncode}): "
                 f"{' '.join(map(str, cmd))}\n{proc.stderr}")
    return took, proc.stdout


def kib(n):
    return f"{n / 1024:,.0f} KiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ingot", required=True, help="the ingot CLI to use")
    ap.add_argument("--workdir", required=True, type=Path)
    args = ap.parse_args()
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)

    model = transformer_block.build(seed=0)
    onnx_path = transformer_block.save(model, work / "transformer_block.onnx")
    artifact = work / "transformer_block.ingot"
    artifact.unlink(missing_ok=True)
    compile_s, _ = timed([args.ingot, "compile", onnx_path, "-o", artifact,
                          "--max-dim", "batch=8", "--max-dim", "seq=128"])

    rng = np.random.default_rng(2024)
    x = rng.standard_normal((BATCH, SEQ, transformer_block.D_MODEL))
    x = x.astype(np.float32)
    np.save(work / "x.npy", x)
    out_dir = work / "out"
    for f in out_dir.glob("*.npy"):
        f.unlink()
    run_s, _ = timed([args.ingot, "run", artifact, "--input",
                      f"x={work / 'x.npy'}", "--output-dir", out_dir])
    got = np.load(out_dir / "y.npy")

    start = time.perf_counter()
    expected = ort_run(model, {"x": x})["y"]
    ort_s = time.perf_counter() - start
    ok = got.shape == expected.shape and got.dtype == expected.dtype
    err = relative_error(got, expected) if ok else float("inf")
    ok = ok and err <= F32_RTOL

    _, info = timed([args.ingot, "inspect", artifact, "--json"])
    mem = json.loads(info)["memory"]
    arena, lower = mem["arena_bytes"], mem["arena_lower_bound_bytes"]
    naive = mem["arena_naive_bytes"]

    print(f"ingot demo: pre-norm transformer block (d_model "
          f"{transformer_block.D_MODEL}, {transformer_block.N_HEADS} heads, "
          f"d_ff {transformer_block.D_FF}) on x [{BATCH}, {SEQ}, "
          f"{transformer_block.D_MODEL}]")
    rows = [
        ("compile", f"{compile_s:.3f} s",
         f"{artifact} ({kib(artifact.stat().st_size)})"),
        ("ingot run", f"{run_s:.3f} s",
         "whole process: load, validate, run, write .npy"),
        ("onnxruntime", f"{ort_s:.3f} s", "session create + run"),
        ("rel. error", f"{err:.2e}",
         f"vs onnxruntime, tolerance {F32_RTOL:g}: "
         f"{'OK' if ok else 'FAIL'}"),
        ("weights", kib(mem["weights_bytes"]), ""),
        ("arena", kib(arena),
         f"{arena / max(lower, 1):.2f} x its lower bound {kib(lower)}; "
         f"no reuse would need {kib(naive)}"),
    ]
    for name, value, note in rows:
        print(f"  {name:<12} {value:>10}   {note}".rstrip())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
