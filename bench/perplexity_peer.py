#!/usr/bin/env python3
"""Perplexity of a GGUF under llama.cpp, beside `ingot perplexity` of the
artifacts compiled from it, on the same text with the same windows.

    .venv-bench/bin/python bench/perplexity_peer.py \\
        --gguf .cache/peers/SmolLM2-135M-Instruct.Q4_1.gguf \\
        --ingot A.ingot[,B.ingot] --text /usr/share/common-licenses/GPL-3

llama.cpp runs through llama-cpp-python (bench/setup_peers.sh) with every
position's logits kept. Both sides use `ingot perplexity`'s method (Hugging
Face's sliding windows, tools/ingot/PerplexityScorer.cpp): windows of
--context tokens start every --stride tokens, each on a fresh context from
position 0, each scoring only the tokens the previous window did not (never
its own first one); NLL = -log softmax(logits)[next token] in float64 with
the max subtracted; perplexity = exp(mean NLL).

Each side tokenises with its own tokenizer (llama.cpp's from the GGUF,
ingot's from the artifact). The script checks that they give the same
number of tokens, so that both score the same windows; it fails otherwise.
A benchmark, not a test: it prints a markdown table.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def plan_windows(tokens, context, stride):
    """[(begin, end, first_scored)] as PerplexityScorer.cpp's planWindows."""
    windows, prev_end, begin = [], 0, 0
    while begin < tokens:
        end = min(begin + context, tokens)
        first = max(prev_end, begin + 1)
        if first < end:
            windows.append((begin, end, first))
        prev_end = end
        if end == tokens:
            break
        begin += stride
    return windows


def window_nll(logits, ids, begin, end, first):
    """Summed NLL of tokens [first, end) from the window's logits, whose
    row j holds the logits after token begin + j."""
    rows = np.asarray(logits[first - 1 - begin:end - 1 - begin], dtype=np.float64)
    mx = rows.max(axis=1)
    lse = mx + np.log(np.exp(rows - mx[:, None]).sum(axis=1))
    targets = np.asarray(ids[first:end])
    return float((lse - rows[np.arange(len(targets)), targets]).sum())


def llama_cpp_perplexity(gguf, text, context, stride, threads, max_tokens):
    from llama_cpp import Llama

    llm = Llama(model_path=gguf, n_ctx=context, n_batch=context, n_ubatch=context,
                logits_all=True, n_threads=threads, n_threads_batch=threads,
                verbose=False)
    ids = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
    if max_tokens:
        ids = ids[:max_tokens]
    windows = plan_windows(len(ids), context, stride)
    nll, scored, t0 = 0.0, 0, time.perf_counter()
    for begin, end, first in windows:
        llm.reset()
        llm.eval(ids[begin:end])
        nll += window_nll(llm.scores[:end - begin], ids, begin, end, first)
        scored += end - first
    seconds = time.perf_counter() - t0
    return {"perplexity": math.exp(nll / scored), "tokens": len(ids),
            "tokens_scored": scored, "windows": len(windows), "seconds": seconds}


def ingot_perplexity(ingot, artifact, text_file, context, stride, threads, max_tokens):
    cmd = [ingot, "perplexity", artifact, "--text", text_file, "--context", str(context),
           "--stride", str(stride), "--threads", str(threads), "--json"]
    if max_tokens:
        cmd += ["--max-tokens", str(max_tokens)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf", required=True, help="the GGUF llama.cpp scores")
    ap.add_argument("--ingot", default="", help="comma-separated artifacts compiled from it")
    ap.add_argument("--text", default="/usr/share/common-licenses/GPL-3")
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--stride", type=int, default=0, help="default: context / 2")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=0, help="score only the first N tokens")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "ingot"))
    args = ap.parse_args()
    stride = args.stride or max(1, args.context // 2)
    with open(args.text, encoding="utf-8") as f:
        text = f.read()

    rows = [("llama.cpp", args.gguf,
             llama_cpp_perplexity(args.gguf, text, args.context, stride, args.threads,
                                  args.max_tokens))]
    for art in filter(None, args.ingot.split(",")):
        rows.append(("ingot", art, ingot_perplexity(args.binary, art, args.text, args.context,
                                                    stride, args.threads, args.max_tokens)))
    peer = rows[0][2]
    print(f"text {args.text}, context {args.context}, stride {stride}, "
          f"{args.threads} threads\n")
    print("| runtime | model | perplexity | vs llama.cpp | tokens scored | windows | s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, model, r in rows:
        rel = (r["perplexity"] / peer["perplexity"] - 1) * 100
        print(f"| {name} | {os.path.basename(model)} | {r['perplexity']:.4f} | "
              f"{rel:+.2f}% | {r['tokens_scored']} | {r['windows']} | {r['seconds']:.1f} |")
    mismatched = [m for _, m, r in rows if r["tokens_scored"] != peer["tokens_scored"]]
    if mismatched:
        sys.exit(f"the tokenizers disagree: {', '.join(mismatched)} scored a different "
                 f"number of tokens than llama.cpp's {peer['tokens_scored']}")


if __name__ == "__main__":
    main()
