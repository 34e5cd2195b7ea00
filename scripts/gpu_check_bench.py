"""The timing half of scripts/gpu-check.sh for real-weight artifacts.

For each prepared artifact under PREPARED/real (the bundled SmolLM2's first
blocks, `gpu-check.sh prepare`): `ingot bench` on CUDA and on the CPU in
the same run, prefill (--pp) and batch-1 decode (--tg), then the serving
engine at several concurrencies on CUDA. Writes gpu-check-bench.json and
gpu-check-bench.md to OUT. These are figures, not assertions.

    python3 scripts/gpu_check_bench.py INGOT PREPARED_DIR OUT_DIR
"""
import json
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
    (out / "gpu-check-bench.md").write_text("\n".join(lines) + "\n")
    print((out / "gpu-check-bench.md").read_text())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
