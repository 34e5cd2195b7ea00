"""Tables and the results file of bench/compare.py."""
import json
import statistics


def summarize(values):
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": mean, "std": std, "median": statistics.median(values), "values": values}


def fmt(s):
    return f"{s['mean']:.1f} ± {s['std']:.1f}"


def markdown_table(results, n_pp, n_tg):
    ing = results.get("ingot")
    head = (f"| stack | weights | pp{n_pp} tok/s | tg{n_tg} tok/s | ingot/peer pp{n_pp} | ingot/peer tg{n_tg} |\n"
            "|---|---|---:|---:|---:|---:|\n")
    rows = []
    for name, r in results.items():
        if "error" in r:
            rows.append(f"| {name} | {r.get('weights', '')} | not measured | not measured | – | – |")
            continue
        if ing and "error" not in ing and name != "ingot":
            rp = f"{ing['pp']['mean'] / r['pp']['mean']:.2f}×"
            rt = f"{ing['tg']['mean'] / r['tg']['mean']:.2f}×"
        else:
            rp = rt = "–"
        rows.append(f"| {name} | {r['weights']} | {fmt(r['pp'])} | {fmt(r['tg'])} | {rp} | {rt} |")
    return head + "\n".join(rows) + "\n"


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
        extra = ", ".join(f"{k}: {v}" for k, v in r.get("info", {}).items() if k != "system_info")
        lines.append(f"- **{name}** ({r['weights']}): {extra}"
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
              "llama-cpp-python's defaults otherwise (n_ctx, n_batch = n_ubatch = 512).", ""]
    return "\n".join(lines)
