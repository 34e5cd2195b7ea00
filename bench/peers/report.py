"""Tables and the results file of bench/compare.py."""
import json
import statistics


def summarize(values):
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": mean, "std": std, "median": statistics.median(values), "values": values}


def fmt(s):
    return f"{s['mean']:.1f} ± {s['std']:.1f}"


def mb(n):
    return f"{n / 1e6:.1f}" if n else "?"


def leading_equal(a, b):
    """How many leading tokens two greedy sequences share, of how many."""
    if not a or not b:
        return None
    n = min(len(a), len(b))
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), n), n


def markdown_table(results, n_pp, n_tg, pairs=()):
    """Two tables: every stack with its weights and speeds, then each ingot
    format beside the llama.cpp file of the same bit width (pairs: (label,
    ingot stack, peer stack)) with the ratio ingot / peer."""
    head = (f"| stack | weights | weight MB | pp{n_pp} tok/s | tg{n_tg} tok/s |\n"
            "|---|---|---:|---:|---:|\n")
    rows = []
    for name, r in results.items():
        size = mb(r.get("weight_bytes"))
        if "error" in r:
            rows.append(f"| {name} | {r.get('weights', '')} | {size} | not measured | not measured |")
        else:
            rows.append(f"| {name} | {r['weights']} | {size} | {fmt(r['pp'])} | {fmt(r['tg'])} |")
    out = head + "\n".join(rows) + "\n"
    prow = []
    for label, a, b in pairs:
        if a not in results or b not in results:
            continue
        ra, rb = results[a], results[b]
        ok = "error" not in ra and "error" not in rb
        cell = (lambda r, k: fmt(r[k]) if "error" not in r else "not measured")
        ratio = (lambda k: f"{ra[k]['mean'] / rb[k]['mean']:.2f}×" if ok else "–")
        eq = leading_equal(ra.get("tg_greedy_tokens"), rb.get("tg_greedy_tokens"))
        prow.append(f"| {label} | {a} | {mb(ra.get('weight_bytes'))} | {b} | {mb(rb.get('weight_bytes'))} | "
                    f"{cell(ra, 'pp')} | {cell(rb, 'pp')} | {ratio('pp')} | "
                    f"{cell(ra, 'tg')} | {cell(rb, 'tg')} | {ratio('tg')} | "
                    f"{f'{eq[0]}/{eq[1]}' if eq else '–'} |")
    if prow:
        out += ("\n| matched | ingot | MB | peer | MB | ingot pp{0} | peer pp{0} | **ingot/peer pp{0}** | "
                "ingot tg{1} | peer tg{1} | **ingot/peer tg{1}** | same greedy tg tokens |\n"
                "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n").format(n_pp, n_tg)
        out += "\n".join(prow) + "\n"
    return out


# -----------------------------------------------------------------------------
# Driver
# -----------------------------------------------------------------------------

def render_markdown(rep, table):
    m, res = rep["machine"], rep["results"]
    lines = [f"# SmolLM2-135M-Instruct on CPU: ingot and its peers ({m['date_utc']})", "",
             "```", rep["command"], "```", "",
             f"- CPU: {m['cpu']} ({m['logical_cpus']} logical CPUs; {m.get('cpu_flags', '')}), "
             f"**{m['threads']} threads** for every stack",
             f"- {m['platform']}, Python {m['python']}" + (f", ingot at {m['git']}" if m.get("git") else ""),
             f"- pp{rep['pp_tokens']}: {rep['pp_tokens']} random prompt tokens in one batch from an empty "
             f"cache, tokens/s = {rep['pp_tokens']} / time. tg{rep['tg_tokens']}: {rep['tg_tokens']} tokens "
             f"generated one at a time (greedy) after a 1-token prompt, tokens/s = {rep['tg_tokens']} / time.",
             f"- mean ± std over {rep['repetitions']} repetitions after one warm-up of each stack; "
             "the stacks run interleaved (order rotated every repetition)."]
    if rep["peer_wait"] == "passive":
        lines.append("- peers' idle threads wait passively (`OMP_WAIT_POLICY=PASSIVE` for llama.cpp, "
                     "`session.intra_op.allow_spinning=0` for onnxruntime): with their default spinning, "
                     "both collapse when other processes share the cores (`--peer-wait spin` measures that).")
    else:
        lines.append("- peers run with their libraries' default thread waiting (spinning).")
    lines.append(f"- load average (1/5/15 min) before: {rep.get('load_average_before')}, "
                 f"after: {rep.get('load_average_after')} on {m['logical_cpus']} logical CPUs")
    if rep["ingot_mode"] == "bench":
        lines.append("- ingot timed with `ingot bench --pp N --tg N -r 1` once per repetition.")
    elif rep["ingot_mode"] == "generate":
        lines.append("- ingot timed with `ingot generate --json` (this build has no `ingot bench`): pp from "
                     "the TTFT of the 512-token prompt, tg from the TPOT of 129 new tokens (128 decode steps).")
    lines += ["", table, "## Details", ""]
    for name, r in res.items():
        if "error" in r:
            lines.append(f"- **{name}**: not measured: {r['error']}")
            continue
        extra = ", ".join(f"{k}: {v}" for k, v in r.get("info", {}).items()
                          if k not in ("system_info", "weight_formats"))
        lines.append(f"- **{name}** ({r['weights']}; {mb(r.get('weight_bytes'))} MB of weights): {extra}"
                     + (f"; load {r['load_s']:.1f} s" if "load_s" in r else ""))
        lines.append(f"  - pp samples: {', '.join(f'{v:.1f}' for v in r['pp']['values'])} "
                     f"(median {r['pp']['median']:.1f}); "
                     f"tg samples: {', '.join(f'{v:.2f}' for v in r['tg']['values'])} "
                     f"(median {r['tg']['median']:.2f})")
        ga = r.get("greedy_agreement")
        if ga and name != ga["reference"]:
            lines.append(f"  - tg greedy tokens from BOS: first {ga['leading_tokens_equal']} of {ga['of']} "
                         f"equal to {ga['reference']}'s")
        si = r.get("info", {}).get("system_info")
        if si:
            lines.append(f"  - llama.cpp system info: `{si}`")
    v = rep.get("onnx_verification")
    if v:
        lines += ["", "ONNX export check (bench/peers/export_onnx_kv.py): "
                  + (f"logits vs float64 reference rel err {v['rel_err_logits_vs_f64']:.2g}, "
                     f"KV-cache split vs one pass rel err {v['rel_err_cache_split']:.2g}, "
                     f"greedy with cache == without: {v['greedy_cache'] == v['greedy_nocache']}"
                     if "rel_err_logits_vs_f64" in v else json.dumps(v))]
    lines += ["", "Notes: the ONNX graph has the optimum form and computes logits at every position "
              "(for pp that adds a [512 x 576] x [576 x 49152] lm_head MatMul that ingot and llama.cpp, "
              "which compute the last position only, do not run). llama.cpp runs with "
              "llama-cpp-python's defaults otherwise (n_ctx, n_batch = n_ubatch = 512).", "",
              "Weight MB: for ingot the bytes of `ingot inspect --json` weight_formats (a quantised "
              "artifact keeps the token embedding in float32 for the gather, about 113 MB, beside its "
              "quantised lm_head copy); for llama.cpp the GGUF file size (tensors plus about 2 MB of "
              "metadata and vocabulary; the tied token_embd is both the gather table and the lm_head); "
              "for onnxruntime the .onnx plus its .data. The Q8_0 / Q4_0 GGUFs are gguf.quants.quantize "
              "of the F32 one, every 2-D tensor (token_embd too); the bundled Q4_1 file has token_embd "
              "(so its lm_head) in Q8_0, where ingot-q4m's lm_head is q4m.", ""]
    return "\n".join(lines)
