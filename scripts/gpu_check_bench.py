"""The timing half of scripts/gpu-check.sh for real-weight artifacts.

For each prepared artifact under PREPARED/real (the bundled SmolLM2's first
blocks, `gpu-check.sh prepare`): `ingot bench` on CUDA and on the CPU in
the same run, prefill (--pp) and batch-1 decode (--tg), then the serving
engine at several concurrencies on CUDA. Writes gpu-check-bench.json and
gpu-check-bench.md to OUT. These are figures, not assertions.

    python3 scripts/gpu_check_bench.py INGOT PREPARED_DIR OUT_DIR
"""
import json
import re
import subprocess
import sys
from pathlib import Path

KV_MB = "4096"  # plenty for 64 x 256 tokens; keeps the GPU's start short
CONCURRENCY = "1,16,64"


def bench(ingot, art, device, args, work):
    out = work / f"bench-{device}-{args[0].strip('-')}.json"
    cmd = [ingot, "bench", str(art), "--device", device, "--kv-cache-mb",
           KV_MB, "--json", str(out), "--no-probe"] + args
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{proc.stderr}")
    return json.loads(out.read_text())


def single(ingot, art, device, work):
    r = bench(ingot, art, device, ["--pp", "512", "--tg", "128", "-r", "3"],
              work)
    return {"pp512_tok_s": r["pp"]["tokens_per_s"]["mean"],
            "tg128_tok_s": r["tg"]["tokens_per_s"]["mean"]}


def serving(ingot, art, device, work):
    r = bench(ingot, art, device,
              ["--num-prompts", "64", "--input-len", "128", "--output-len",
               "128", "--max-concurrency", CONCURRENCY, "--seed", "7"], work)
    return [{"max_concurrency": s["max_concurrency"],
             "request_throughput": s["request_throughput"],
             "output_throughput": s["output_throughput"],
             "ttft_ms_p50": s["ttft_ms"]["p50"], "ttft_ms_p99": s["ttft_ms"]["p99"],
             "tpot_ms_p50": s["tpot_ms"]["p50"], "tpot_ms_p99": s["tpot_ms"]["p99"]}
            for s in r["sweep"]]


def profile(ingot, art, device, concurrency, work):
    """Where a decode step's time goes at this concurrency: `bench
    --profile` (a synchronise after every step's launches), the trace's
    decode steps of the most tokens seen (prompts arrive while others
    decode, so `concurrency` itself may never be reached), each kernel's
    mean time per such step grouped by kernel and graph node with layer
    numbers folded, and the median gap after such a step (the engine's host
    work: sampling, scheduling)."""
    trace = work / f"trace-{device}-{concurrency}.json"
    prompts = str(max(4, concurrency))
    bench(ingot, art, device, ["--num-prompts", prompts, "--input-len", "128",
                               "--output-len", "32", "--max-concurrency",
                               str(concurrency), "--profile", str(trace)], work)
    events = json.loads(trace.read_text())["traceEvents"]
    steps = sorted((e for e in events if e.get("cat") == "step"),
                   key=lambda e: e["ts"])
    decode = [e for e in steps if e["name"].startswith("decode ")]
    if not decode:
        return {"device": device, "concurrency": concurrency, "steps": 0}
    most = max(e["args"]["tokens"] for e in decode)
    chosen = [e for e in decode if e["args"]["tokens"] == most]
    runs = {e["args"]["run"] for e in chosen}
    gaps = sorted(b["ts"] - (a["ts"] + a["dur"])
                  for a, b in zip(steps, steps[1:]) if a["args"]["run"] in runs)
    kernels = {}
    for e in events:
        if e.get("cat") == "kernel" and e["args"]["run"] in runs:
            origin = re.sub(r"\.\d+\.", ".*.", e["args"]["origin"])
            key = f"{e['name']} {origin}"
            kernels[key] = kernels.get(key, 0.0) + e["dur"] / len(runs)
    top = sorted(kernels.items(), key=lambda kv: -kv[1])[:12]
    return {"device": device, "concurrency": concurrency, "tokens": most,
            "steps": len(runs),
            "step_us": sum(e["dur"] for e in chosen) / len(chosen),
            "gap_us": gaps[len(gaps) // 2] if gaps else None,
            "top_kernels_us": top}


def main(argv):
    ingot, prepared, out = argv[1], Path(argv[2]), Path(argv[3])
    work = Path("/tmp/gpu-check-bench")
    work.mkdir(parents=True, exist_ok=True)
    rows, failed = [], False
    for art in sorted((prepared / "real").glob("*.ingot")):
        row = {"model": art.stem}
        try:
            for device in ("cuda", "cpu"):
                row[device] = single(ingot, art, device, work)
                print(json.dumps({art.stem: {device: row[device]}}), flush=True)
            row["cuda_serving"] = serving(ingot, art, "cuda", work)
            print(json.dumps(row["cuda_serving"]), flush=True)
            row["cuda_profiles"] = [profile(ingot, art, "cuda", c, work)
                                    for c in (1, 64)]
            for prof in row["cuda_profiles"]:
                print(json.dumps(prof, indent=1), flush=True)
            rows.append(row)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"{art.stem}: FAILED\n{e}", flush=True)
            failed = True
    (out / "gpu-check-bench.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = ["| model | pp512 tok/s cuda / cpu | tg128 tok/s cuda / cpu |",
             "|---|---|---|"]
    for r in rows:
        c, p = r["cuda"], r["cpu"]
        lines.append(f"| {r['model']} | {c['pp512_tok_s']:.0f} / "
                     f"{p['pp512_tok_s']:.0f} | {c['tg128_tok_s']:.0f} / "
                     f"{p['tg128_tok_s']:.0f} |")
    lines += ["", "| model | concurrency (cuda) | output tok/s | req/s | "
              "TTFT p50/p99 ms | TPOT p50/p99 ms |", "|---|---|---|---|---|---|"]
    for r in rows:
        for s in r["cuda_serving"]:
            lines.append(
                f"| {r['model']} | {s['max_concurrency']} | "
                f"{s['output_throughput']:.0f} | {s['request_throughput']:.2f} | "
                f"{s['ttft_ms_p50']:.1f} / {s['ttft_ms_p99']:.1f} | "
                f"{s['tpot_ms_p50']:.2f} / {s['tpot_ms_p99']:.2f} |")
    for r in rows:
        for prof in r.get("cuda_profiles", []):
            if not prof.get("steps"):
                continue
            lines += ["", f"{r['model']}, cuda, concurrency "
                      f"{prof['concurrency']}: decode steps of {prof['tokens']} "
                      f"tokens take {prof['step_us']:.0f} us (profiled: a "
                      f"synchronise after each step), then {prof['gap_us']:.0f}"
                      " us of host work before the next; per step:", "",
                      "| kernel and node | us |", "|---|---|"]
            lines += [f"| {k} | {v:.1f} |" for k, v in prof["top_kernels_us"]]
    (out / "gpu-check-bench.md").write_text("\n".join(lines) + "\n")
    print((out / "gpu-check-bench.md").read_text())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
