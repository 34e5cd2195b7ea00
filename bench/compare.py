#!/usr/bin/env python3
"""ingot next to its peers on SmolLM2-135M, on one machine, in one run.

    bench/setup_peers.sh                 # once: .venv-bench with the peers
    .venv-bench/bin/python bench/compare.py [--threads 2] [-r 3]

Measures llama-bench's pp512 (512 prompt tokens in one batch from an empty
cache; tokens/s = 512 / time) and tg128 (128 tokens generated one at a time
at batch 1 after a 1-token prompt; tokens/s = 128 / time) for

  ingot        .cache/demo/smollm2-135m-instruct.ingot (f32, compiled from
               the HF directory; recompiled when build/bin/ingot is newer)
  ingot-int8, ingot-int4, ingot-q4m, ingot-fp8
               artifacts of the same HF dir compiled with --quant int8 /
               int4 / int4 --quant-scheme asym / fp8 into .cache/peers/
               (recompiled when build/bin/ingot is newer or the flags change)
  ingot-gguf   the bundled Q4_1 GGUF compiled directly (its blocks kept)
  ingot-int8-a8, ingot-int4-a8, ingot-gguf-a8
               ingot-int8, ingot-int4 and ingot-gguf with --act-quant int8
               (int8 activations, int8 dot products: llama.cpp's arithmetic)
  ingot-int8c-a8
               --quant int8 --group-size 0 --act-quant int8: int8 weights
               per output channel (as onnxruntime-int8's), x int8 per 32
  ingot-int8-a8-e, ingot-int4-a8-e
               ingot-int8-a8 and ingot-int4-a8 with --quant-embed same: the
               embedding table in q8 / q4 too, shared with the tied lm_head
               (the same bytes as the all-2-D Q8_0 / Q4_0 GGUFs)
  llama.cpp    through llama-cpp-python, on the original Q4_1 GGUF, on F32
               and F16 GGUFs of the same weights, and on Q8_0 / Q4_0 GGUFs
               quantised from the F32 one by gguf.quants (bench/peers/make_gguf.py)
  onnxruntime  on an ONNX export with a KV cache, f32
               (bench/peers/export_onnx_kv.py, verified against the float64
               reference before it is timed)
  onnxruntime-int8, onnxruntime-int4
               that export quantised by onnxruntime.quantization:
               quantize_dynamic (MatMulInteger, int8 per channel) and
               MatMulNBitsQuantizer (4-bit sym g32, accuracy_level 4)

`--stacks a,b,...` runs a subset (bench/peers/stacks.py lists them).
Every stack runs in its own long-lived worker process with the same thread
count; after one warm-up of each, the repetitions are interleaved (every
stack does pp then tg, in an order rotated each repetition) so that the
machine's noise falls on all of them alike. It prints a markdown table (mean
± std over the repetitions, weight bytes), then one pairing each ingot format
with the llama.cpp file of the same bit width (f32/F32, int8/Q8_0, int4/Q4_0,
q4m/Q4_1; also f32 against F16 and onnxruntime, the int8-activation modes
against onnxruntime's int8 and 4-bit models) with the ratio ingot / peer,
and writes them, with
the command line and the machine, to
bench/results/YYYY-MM-DD-compare-smollm2-cpu.md and a .json beside it.

ingot is timed with `ingot bench --pp N --tg N -r 1` when the binary has a
`bench` command, else with `ingot generate --json`: pp from the TTFT of a
512-token prompt with one new token, tg from the TPOT of 129 new tokens after
a 1-token prompt (TPOT averages exactly the 128 decode steps). The results
file says which was used.
"""
import argparse
import datetime
import json
import os
import platform
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))
from ingot_cli import IngotCli  # noqa: E402
from report import markdown_table, render_markdown, summarize  # noqa: E402
from stacks import (ALL_STACKS, ARTIFACT, CACHE, GGUF_STACKS, INGOT_STACKS, PAIRS,  # noqa: E402
                    ORT_STACKS, PEER_WEIGHTS, ingot_artifact, ingot_weights, onnx_bytes,
                    prepare_gguf, prepare_onnx, prepare_onnx_quant, rel)
from workers import Worker  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
VENV_PY = REPO / ".venv-bench" / "bin" / "python"
VOCAB = 49152
BOS = 1


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# -----------------------------------------------------------------------------
# Reporting
# -----------------------------------------------------------------------------

def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average():
    """1/5/15-minute load averages: how busy the shared machine was."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def cpu_flags():
    """The SIMD flags that decide which kernels the stacks pick."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                have = set(line.split(":", 1)[1].split())
                keep = ("avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                        "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16")
                return " ".join(f for f in keep if f in have)
    except OSError:
        pass
    return ""


def ensure_venv():
    """Re-runs under .venv-bench when the peers are not importable here."""
    try:
        import numpy  # noqa: F401
        import onnxruntime  # noqa: F401
        import gguf  # noqa: F401
        return
    except ImportError:
        pass
    if VENV_PY.is_file() and Path(sys.prefix).resolve() != VENV_PY.parents[1].resolve():
        os.execv(str(VENV_PY), [str(VENV_PY), str(Path(__file__).resolve())] + sys.argv[1:])
    sys.exit("error: numpy/onnxruntime/gguf missing; run bench/setup_peers.sh first")



def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-r", "--repetitions", type=int, default=3)
    ap.add_argument("--pp", type=int, default=512)
    ap.add_argument("--tg", type=int, default=128)
    ap.add_argument("--stacks", default=",".join(ALL_STACKS),
                    help=f"comma-separated subset of {','.join(ALL_STACKS)}")
    ap.add_argument("--ingot", type=Path, default=REPO / "build" / "bin" / "ingot")
    ap.add_argument("--artifact", type=Path, default=ARTIFACT,
                    help="the f32 `ingot` stack's artifact (default: make demo's, recompiled when stale)")
    ap.add_argument("--ingot-group-size", type=int, default=None,
                    help="--group-size for the ingot-int8/int4/q4m artifacts (default: the compiler's, 32)")
    ap.add_argument("--ingot-mode", choices=("auto", "bench", "generate"), default="auto")
    ap.add_argument("--skip-verify", action="store_true", help="reuse the last ONNX verification")
    ap.add_argument("--out", type=Path, default=None,
                    help="results .md path (default bench/results/DATE-compare-smollm2-cpu.md)")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random pp prompt")
    ap.add_argument("--peer-wait", choices=("spin", "passive"), default="spin",
                    help="how the peers' idle threads wait: spin (default: the libraries' own "
                         "setting, fastest on a quiet machine) or passive (OMP_WAIT_POLICY=PASSIVE "
                         "for llama.cpp, session.intra_op.allow_spinning=0 for onnxruntime: spinning "
                         "threads collapse when other processes share the cores)")
    args = ap.parse_args(argv)
    ensure_venv()

    stacks = [s.strip() for s in args.stacks.split(",") if s.strip()]
    for s in stacks:
        if s not in ALL_STACKS:
            ap.error(f"unknown stack {s!r}")
    n_ctx = max(1024, args.pp + args.tg + 8)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = load_average()
    exe = Path(sys.executable)
    exe = os.path.relpath(exe, REPO) if exe.is_relative_to(REPO) else "python"
    command = " ".join(shlex.quote(a) for a in [exe, os.path.relpath(__file__, REPO)] + argv)
    results, runners = {}, {}
    weights = dict(PEER_WEIGHTS)  # stack -> what its weights are; ingot's from `ingot inspect`
    weight_bytes = {}  # stack -> bytes: ingot's weight_formats total, the GGUF / ONNX file size
    onnx_check = None

    # Models and workers.
    tmpdir = CACHE / "tmp"
    tmpdir.mkdir(parents=True, exist_ok=True)
    gguf_paths = prepare_gguf(stacks) if any(s in GGUF_STACKS for s in stacks) else {}
    onnx_path = None
    onnx_paths = {}
    if any(s in ORT_STACKS for s in stacks):
        onnx_path, onnx_check = prepare_onnx(args.threads, args.skip_verify)
        for s in stacks:
            if s in ORT_STACKS:
                onnx_paths[s] = onnx_path if s == "onnxruntime" else prepare_onnx_quant(s, onnx_path)
    for s in stacks:
        weights.setdefault(s, " ".join(INGOT_STACKS.get(s, [])) or "f32")
        try:
            if s in INGOT_STACKS:
                art = ingot_artifact(args.ingot, s, args.artifact, args.ingot_group_size)
                weights[s], weight_bytes[s], formats = ingot_weights(args.ingot, art)
                runners[s] = IngotCli(args.ingot, art, args.threads, args.ingot_mode, tmpdir)
                runners[s].info["artifact"] = rel(art)
                runners[s].info["weight_formats"] = formats
            elif s in GGUF_STACKS:
                weight_bytes[s] = gguf_paths[s].stat().st_size
                try:
                    import llama_cpp  # noqa: F401
                except ImportError as e:
                    raise RuntimeError(f"llama-cpp-python is not installed ({e}); run bench/setup_peers.sh")
                log(f"loading {s}")
                runners[s] = Worker("llama", gguf_paths[s], args.threads, n_ctx, args.peer_wait)
                runners[s].info["model"] = rel(gguf_paths[s])
            else:
                weight_bytes[s] = onnx_bytes(onnx_paths[s])
                log(f"loading {s}")
                runners[s] = Worker("ort", onnx_paths[s], args.threads, n_ctx, args.peer_wait)
                runners[s].info["model"] = rel(onnx_paths[s])
        except Exception as e:  # noqa: BLE001 - a missing peer is reported, not fatal
            log(f"{s}: {e}")
            results[s] = {"weights": weights[s], "error": str(e)}

    rng = random.Random(args.seed)
    prompt = [rng.randrange(VOCAB) for _ in range(args.pp)]
    samples = {s: {"pp": [], "tg": []} for s in runners}

    def measure(s):
        r = runners[s]
        if isinstance(r, IngotCli):
            return r.pp_tg(prompt, args.tg)
        return r.pp(prompt), r.tg(args.tg)

    order = [s for s in stacks if s in runners]
    try:
        for s in list(order):
            log(f"warm-up {s}")
            try:
                measure(s)
            except Exception as e:  # noqa: BLE001
                log(f"{s}: {e}")
                results[s] = {"weights": weights[s], "error": str(e)}
                order.remove(s)
        for rep in range(args.repetitions):
            k = rep % len(order) if order else 0
            for s in order[k:] + order[:k]:
                time.sleep(0.5)  # let the previous stack's spinning threads park
                pp, tg = measure(s)
                samples[s]["pp"].append(pp)
                samples[s]["tg"].append(tg)
                log(f"rep {rep + 1}/{args.repetitions} {s:16s} pp{args.pp} {pp:8.1f} tok/s   "
                    f"tg{args.tg} {tg:7.2f} tok/s")
        for s in order:
            ing = runners[s]
            if isinstance(ing, IngotCli) and ing.greedy_tokens is None:
                try:  # untimed: ingot's greedy tokens for the agreement check
                    ing.greedy_tokens = ing._generate([BOS], args.tg + 1)["tokens"]
                except Exception as e:  # noqa: BLE001
                    log(f"{s} generate (greedy check): {e}")
    finally:
        for r in runners.values():
            if isinstance(r, Worker):
                r.close()

    ordered = {}
    for s in stacks:
        if s in results:
            ordered[s] = results[s]
            if s in weight_bytes:
                ordered[s]["weight_bytes"] = weight_bytes[s]
        elif s in samples and samples[s]["pp"]:
            ordered[s] = {"weights": weights[s], "weight_bytes": weight_bytes.get(s),
                          "pp": summarize(samples[s]["pp"]),
                          "tg": summarize(samples[s]["tg"]), "info": runners[s].info}
            if isinstance(runners[s], Worker):
                ordered[s]["load_s"] = runners[s].load_s
            if runners[s].greedy_tokens:
                ordered[s]["tg_greedy_tokens"] = runners[s].greedy_tokens
    results = ordered
    # Sanity: the tg runs decode greedily from BOS, so every stack should
    # produce (nearly) the same text; count the leading tokens each shares
    # with ingot's (or, without ingot's, llama.cpp F32's) sequence.
    ref_name = next((n for n in ("ingot", "llama.cpp-f32") if results.get(n, {}).get("tg_greedy_tokens")), None)
    if ref_name:
        ref = results[ref_name]["tg_greedy_tokens"]
        for r in results.values():
            toks = r.get("tg_greedy_tokens")
            if toks:
                same = next((i for i, (a, b) in enumerate(zip(ref, toks)) if a != b), min(len(ref), len(toks)))
                r["greedy_agreement"] = {"reference": ref_name, "leading_tokens_equal": same,
                                         "of": min(len(ref), len(toks))}
    table = markdown_table(results, args.pp, args.tg, PAIRS)
    print(table)

    machine = {"cpu": cpu_model(), "cpu_flags": cpu_flags(), "logical_cpus": os.cpu_count(), "threads": args.threads,
               "platform": platform.platform(), "python": platform.python_version(),
               "date_utc": started.strftime("%Y-%m-%d %H:%M UTC")}
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        machine["git"] = commit + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        pass
    ingot_mode = runners["ingot"].mode if "ingot" in runners else None
    report = {"command": command, "machine": machine, "pp_tokens": args.pp, "tg_tokens": args.tg,
              "repetitions": args.repetitions, "ingot_mode": ingot_mode, "peer_wait": args.peer_wait,
              "load_average_before": load_before, "load_average_after": load_average(),
              "onnx_verification": onnx_check, "results": results}
    if args.no_save:
        return 0
    out = args.out or REPO / "bench" / "results" / f"{started:%Y-%m-%d}-compare-smollm2-cpu.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    out.write_text(render_markdown(report, table))
    log(f"wrote {out} and {out.with_suffix('.json')}")
    return 0



if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
