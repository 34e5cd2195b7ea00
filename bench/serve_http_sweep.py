"""The same serving workload in-process (`ingot bench ART`) and over HTTP
(`ingot serve ART` + `ingot bench ART --endpoint`), one concurrency sweep
each, in one run on one machine; prints a table of both and their ratio.
The difference is the HTTP path: parsing, SSE framing, the handler threads
and the client's own timing. On a 2-core machine the client, the server's
HTTP threads and the engine share the cores, and that is part of the
figure.

    python bench/serve_http_sweep.py ARTIFACT [--levels 1,8,32]
        [--num-prompts 32] [--input-len 128] [--output-len 64]
        [--threads N] [--out FILE.md]

--threads sets the engine's threads in both runs; below the core count it
leaves the HTTP threads and the client a core of their own.

A benchmark, not a test: it prints figures and asserts nothing.
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INGOT = ROOT / "build" / "bin" / "ingot"


def bench(args, extra, json_path):
    cmd = [str(INGOT), "bench", str(args.artifact), "--num-prompts",
           str(args.num_prompts), "--input-len", str(args.input_len),
           "--output-len", str(args.output_len), "--max-concurrency",
           args.levels, "--warmup", "4", "--no-probe", "--json",
           str(json_path), *extra]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    return " ".join(cmd), json.loads(Path(json_path).read_text())


def start_server(artifact, threads):
    extra = ["--threads", str(threads)] if threads else []
    proc = subprocess.Popen([str(INGOT), "serve", str(artifact), "--port", "0",
                             *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    line = proc.stdout.readline()
    m = re.search(r"(http://[\d.]+:\d+)", line)
    if not m:
        sys.exit(f"ingot serve did not start: {line}{proc.stderr.read()}")
    return proc, m.group(1)


def row(level, local, remote):
    def fig(run):
        return (run["output_throughput"], run["ttft_ms"]["p50"],
                run["ttft_ms"]["p99"], run["tpot_ms"]["mean"],
                run["itl_ms"]["mean"])
    a, b = fig(local), fig(remote)
    return (f"| {level} | {a[0]:.1f} | {b[0]:.1f} | {b[0] / a[0]:.2f} | "
            f"{a[1]:.1f} / {b[1]:.1f} | {a[2]:.1f} / {b[2]:.1f} | "
            f"{a[3]:.2f} / {b[3]:.2f} | {b[4] - a[4]:+.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifact", type=Path)
    ap.add_argument("--levels", default="1,8,32")
    ap.add_argument("--num-prompts", type=int, default=32)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        local_cmd, local = bench(args, [], Path(tmp) / "local.json")
        server, url = start_server(args.artifact, args.threads)
        try:
            time.sleep(0.5)
            remote_cmd, remote = bench(args, ["--endpoint", url],
                                       Path(tmp) / "http.json")
        finally:
            server.terminate()
            server.wait(60)
    lines = [
        f"artifact {args.artifact}; {args.num_prompts} requests per level, "
        f"{args.input_len} prompt + {args.output_len} output tokens "
        "(random ids, greedy, ignore_eos)",
        f"machine: {local['machine']['cpu_model']} ({local['machine']['isa']}), "
        f"{local['machine']['threads']} threads",
        f"in-process: `{local_cmd}`",
        f"over HTTP:  `ingot serve ART --port 0"
        f"{' --threads ' + str(args.threads) if args.threads else ''}` + "
        f"`{remote_cmd}`",
        "",
        "| concurrency | in-process out tok/s | HTTP out tok/s | HTTP / in-process "
        "| TTFT p50 ms (in / HTTP) | TTFT p99 ms | TPOT mean ms | ITL mean "
        "difference ms (HTTP − in) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for a, b in zip(local["sweep"], remote["sweep"]):
        lines.append(row(a["max_concurrency"], a, b))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
