"""The 1B-model part of scripts/gpu-check.sh on the GPU machine.

PREPARED/big holds llama1b.ingot, compiled here from a Llama-3.2-1B-shaped
directory with --weights=external (no weight bytes travel), and that
directory's config and tokenizer files. On the GPU machine this script:
  1. builds the model with transformers from config.json (seeded random
     init), saves its bf16 weights as WORK/llama1b/model.safetensors;
  2. ingot's prompt logits on CUDA (--weights WORK/llama1b) against
     transformers in f32 on the same bf16 values (relative error), and 32
     greedy tokens of each (first difference with the reference's top-2
     margin there, so a near-tie is told apart from a bug);
  3. figures: ingot prefill (pp512, pp2048) and batch-1 decode (tg128), a
     64-request serving sweep at concurrency 1, 8 and 64, and transformers
     (sdpa, bf16) prefill and decode in the same run; decode as GB/s of
     weights read per token.
Writes gpu-check-big.json and gpu-check-big.md to OUT_DIR. With --device
cpu (a dry run on a machine without a GPU, torch for the CPU installed)
only steps 1 and 2 run, both sides on the CPU.

    python3 scripts/gpu_check_big.py INGOT PREPARED_DIR OUT_DIR [--device cpu]
"""
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_check_bench import bench  # noqa: E402

# Both sides compute in f32 on the same bf16 weight values; only the order
# of sums differs (~1e-6 relative per dot product over 16 layers).
LOGITS_RTOL = 1e-3
PROMPT = [5, 9, 14, 3, 22, 7, 11, 30, 40, 2, 17, 8, 19, 60, 61, 62]


def make_weights(config_dir, weights_dir):
    import torch
    import transformers
    torch.manual_seed(0)
    cfg = transformers.AutoConfig.from_pretrained(config_dir)
    model = transformers.LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(weights_dir, safe_serialization=True,
                          max_shard_size="100GB")
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(Path(config_dir) / f, weights_dir)
    return model


DEVICE = "cuda"


def ingot_generate(ingot, art, weights, work, new_tokens, logits=None):
    cmd = [ingot, "generate", str(art), "--weights", str(weights), "--device",
           DEVICE, "--json", "--temperature", "0", "--kv-cache-mb", "4096",
           "--max-new-tokens", str(new_tokens),
           "--prompt-tokens", ",".join(map(str, PROMPT))]
    if logits:
        cmd += ["--logits-out", str(logits)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{proc.stderr}")
    out = json.loads(proc.stdout)
    out["wall_s"] = time.perf_counter() - start
    return out


def numerics(ingot, art, weights, model, work):
    import torch
    logits_file = work / "big-logits.npy"
    ingot_generate(ingot, art, weights, work, 1, logits_file)
    got = np.load(logits_file).astype(np.float64)
    ref_model = model.to(DEVICE, torch.float32).eval()
    ids = torch.tensor([PROMPT], device=DEVICE)
    with torch.no_grad():
        ref = ref_model(ids).logits[0, -1].double().cpu().numpy()
        greedy = ref_model.generate(ids, max_new_tokens=32, do_sample=False,
                                    min_new_tokens=32)[0, len(PROMPT):]
    err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    tokens = ingot_generate(ingot, art, weights, work, 32)["tokens"]
    want = [int(t) for t in greedy.tolist()]
    first = next((i for i, (a, b) in enumerate(zip(tokens, want)) if a != b),
                 None)
    margin = None
    if first is not None:
        with torch.no_grad():
            row = ref_model(torch.tensor([PROMPT + want[:first]],
                                         device=DEVICE)).logits[0, -1]
        top = torch.topk(row.float(), 2).values
        margin = float(top[0] - top[1])
    return {"logits_rel_err": err, "logits_ok": err < LOGITS_RTOL,
            "greedy_equal_tokens": first if first is not None else 32,
            "first_difference_top2_margin": margin}


def peer(model, prompt_lens=(512, 2048), decode_tokens=128):
    """transformers (sdpa, bf16) prefill tok/s and batch-1 decode tok/s."""
    import torch
    m = model.to("cuda", torch.bfloat16).eval()
    out = {}
    with torch.no_grad():
        for n in prompt_lens:
            ids = torch.randint(3, 1000, (1, n), device="cuda")
            m(ids)
            torch.cuda.synchronize()
            start = time.perf_counter()
            m(ids)
            torch.cuda.synchronize()
            out[f"pp{n}_tok_s"] = n / (time.perf_counter() - start)
        ids = torch.tensor([PROMPT], device="cuda")
        m.generate(ids, max_new_tokens=8, min_new_tokens=8, do_sample=False)
        torch.cuda.synchronize()
        start = time.perf_counter()
        m.generate(ids, max_new_tokens=decode_tokens,
                   min_new_tokens=decode_tokens, do_sample=False)
        torch.cuda.synchronize()
        out["tg_tok_s"] = decode_tokens / (time.perf_counter() - start)
    return out


def figures(ingot, art, weights, work):
    w = ["--weights", str(weights)]
    r = {}
    for n in (512, 2048):
        b = bench(ingot, art, "cuda", ["--pp", str(n), "-r", "3"] + w, work)
        r[f"pp{n}_tok_s"] = b["pp"]["tokens_per_s"]["mean"]
    b = bench(ingot, art, "cuda", ["--tg", "128", "-r", "3"] + w, work)
    r["tg128_tok_s"] = b["tg"]["tokens_per_s"]["mean"]
    b = bench(ingot, art, "cuda",
              ["--num-prompts", "64", "--input-len", "128", "--output-len",
               "128", "--max-concurrency", "1,8,64", "--seed", "7"] + w, work)
    r["serving"] = [{"max_concurrency": s["max_concurrency"],
                     "output_throughput": s["output_throughput"],
                     "ttft_ms_p50": s["ttft_ms"]["p50"],
                     "tpot_ms_p50": s["tpot_ms"]["p50"],
                     "tpot_ms_p99": s["tpot_ms"]["p99"]} for s in b["sweep"]]
    return r


def report(row, out):
    (out / "gpu-check-big.json").write_text(json.dumps(row, indent=2) + "\n")
    lines = [f"Llama-3.2-1B-shaped, random bf16 weights ({row['weight_gib']:.2f}"
             " GiB), artifact compiled with --weights=external", ""]
    n = row.get("numerics")
    if n:
        lines += [f"- logits vs transformers f32: rel err {n['logits_rel_err']:.2e}"
                  f" ({'ok' if n['logits_ok'] else 'TOO LARGE'})",
                  f"- greedy tokens equal: {n['greedy_equal_tokens']} of 32"
                  + (f" (top-2 margin at the first difference "
                     f"{n['first_difference_top2_margin']:.3g})"
                     if n["first_difference_top2_margin"] is not None else ""),
                  f"- load + 1 token wall: {row.get('load_wall_s', 0):.1f} s", ""]
    f, p = row.get("ingot"), row.get("transformers")
    if f and p:
        gbs = f["tg128_tok_s"] * row["weight_gib"] * 2**30 / 1e9
        lines += ["| | ingot | transformers | ratio |", "|---|---|---|---|"]
        for key, peer_key in (("pp512_tok_s", "pp512_tok_s"),
                              ("pp2048_tok_s", "pp2048_tok_s"),
                              ("tg128_tok_s", "tg_tok_s")):
            lines.append(f"| {key} | {f[key]:.0f} | {p[peer_key]:.0f} | "
                         f"{f[key] / p[peer_key]:.2f}x |")
        lines += ["", f"batch-1 decode reads {gbs:.0f} GB/s of weights", "",
                  "| concurrency | output tok/s | TTFT p50 ms | TPOT p50/p99 ms |",
                  "|---|---|---|---|"]
        lines += [f"| {s['max_concurrency']} | {s['output_throughput']:.0f} | "
                  f"{s['ttft_ms_p50']:.1f} | {s['tpot_ms_p50']:.2f} / "
                  f"{s['tpot_ms_p99']:.2f} |" for s in f["serving"]]
    (out / "gpu-check-big.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


def main(argv):
    global DEVICE
    if argv[4:] == ["--device", "cpu"]:
        DEVICE = "cpu"
    elif len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    ingot, prepared, out = argv[1], Path(argv[2]), Path(argv[3])
    art = prepared / "big" / "llama1b.ingot"
    work = Path("/tmp/gpu-check-big")
    shutil.rmtree(work, ignore_errors=True)
    weights = work / "llama1b"
    work.mkdir(parents=True)
    model = make_weights(prepared / "big" / "config", weights)
    row = {"weight_gib": (weights / "model.safetensors").stat().st_size / 2**30}
    failed = False
    try:
        row["load_wall_s"] = ingot_generate(ingot, art, weights, work, 1)["wall_s"]
        row["numerics"] = numerics(ingot, art, weights, model, work)
        failed = not row["numerics"]["logits_ok"]
        if DEVICE == "cuda":
            row["ingot"] = figures(ingot, art, weights, work)
            row["transformers"] = peer(model)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"llama1b: FAILED\n{e}", flush=True)
        row["error"] = str(e)[-2000:]
        failed = True
    report(row, out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
