"""Exports a Hugging Face Llama directory to ONNX with a KV cache, in the
form optimum / transformers exporters write, built with onnx.helper from the
safetensors (no torch needed).

    python bench/peers/export_onnx_kv.py HF_DIR -o model.onnx [--verify]

Inputs                                        Outputs
  input_ids            int64 [batch, seq]       logits   float32 [batch, seq, vocab]
  attention_mask       int64 [batch, total]     present.N.key / present.N.value
  position_ids         int64 [batch, seq]                float32 [batch, kv_heads, total, head_dim]
  past_key_values.N.key / .value
                       float32 [batch, kv_heads, past, head_dim]

total = past + seq. Like optimum's export it computes logits at every
position. The weights go into one external-data file next to the graph
(model.onnx.data). The graph is plain ONNX (opset 17): embedding Gather,
RMSNorm as Pow/ReduceMean/Add/Sqrt/Div/Mul (onnxruntime fuses it into
SimplifiedLayerNormalization), q/k/v MatMuls, rotate-half rope with cos/sin
tables gathered by position_ids, Concat of past and new K/V, GQA by
repeating each KV head, a causal + padding mask, Softmax, o_proj, SwiGLU MLP
and the lm_head (the embedding, transposed, when the weights are tied).

--verify checks the export with onnxruntime against the float64 reference in
test/fixtures/hf_reference.py: the logits of a prompt (no cache) must agree
to a relative error below 1e-4 (max |a - b| / max |b|), the same prompt fed
in two pieces through the KV cache must give the same logits, and greedy
decoding with the cache must pick the same tokens as greedy decoding that
recomputes the whole sequence every step.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]


def load_safetensors(model_dir):
    from safetensors.numpy import load_file
    model_dir = Path(model_dir)
    index = model_dir / "model.safetensors.index.json"
    files = ([model_dir / f for f in sorted(set(json.loads(index.read_text())["weight_map"].values()))]
             if index.is_file() else [model_dir / "model.safetensors"])
    weights = {}
    for f in files:
        weights.update(load_file(str(f)))
    return weights


class Graph:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, hint):
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, hint, array):
        n = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def op(self, op_type, inputs, hint=None, n_out=1, **attrs):
        outs = [self.name(hint or op_type) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.name("n_" + op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def op_to(self, op_type, inputs, output, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=self.name("n_" + op_type), **attrs))
        return output


def rope_tables(cfg, max_pos):
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    theta = float(cfg.get("rope_theta", 10000.0))
    scaling = cfg.get("rope_scaling")
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    if scaling:
        kind = scaling.get("rope_type", scaling.get("type", "default"))
        if kind == "linear":
            inv_freq = inv_freq / scaling["factor"]
        elif kind == "llama3":
            sys.path.insert(0, str(REPO / "test" / "fixtures"))
            from hf_reference import llama3_inv_freq
            inv_freq = llama3_inv_freq(inv_freq, scaling)
        elif kind != "default":
            raise NotImplementedError(f"rope_scaling {kind!r}")
    angles = np.arange(max_pos, dtype=np.float64)[:, None] * inv_freq[None, :]
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def build(model_dir, max_pos=None):
    model_dir = Path(model_dir)
    cfg = json.loads((model_dir / "config.json").read_text())
    if cfg.get("architectures", ["LlamaForCausalLM"])[0] not in ("LlamaForCausalLM", "MistralForCausalLM"):
        raise ValueError(f"{model_dir}: only Llama-style models are supported")
    W = load_safetensors(model_dir)
    H = cfg["hidden_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or H // nh
    L = cfg["num_hidden_layers"]
    eps = float(cfg["rms_norm_eps"])
    max_pos = max_pos or cfg.get("max_position_embeddings", 2048)
    f32 = lambda a: np.ascontiguousarray(np.asarray(a, dtype=np.float32))

    g = Graph()
    cos_t, sin_t = rope_tables(cfg, max_pos)
    cos_c, sin_c = g.const("cos_cache", cos_t), g.const("sin_cache", sin_t)
    i64 = lambda hint, v: g.const(hint, np.array(v, dtype=np.int64))
    c_axes0, c_axes1, c_axes2 = i64("ax0", [0]), i64("ax1", [1]), i64("ax2", [2])
    c_eps = g.const("eps", np.array(eps, dtype=np.float32))
    c_two = g.const("two", np.array(2.0, dtype=np.float32))
    c_scale = g.const("scale", np.array(1.0 / np.sqrt(hd), dtype=np.float32))

    def rms(x, weight_name):
        w = g.const(weight_name, f32(W[weight_name]))
        var = g.op("ReduceMean", [g.op("Pow", [x, c_two])], axes=[-1], keepdims=1)
        return g.op("Mul", [g.op("Div", [x, g.op("Sqrt", [g.op("Add", [var, c_eps])])]), w])

    def linear(x, weight_name):
        return g.op("MatMul", [x, g.const(weight_name, f32(W[weight_name]).T.copy())])

    # Shapes and the mask, shared by every layer.
    ids_shape = g.op("Shape", ["input_ids"])
    seq = g.op("Gather", [ids_shape, i64("one", 1)], axis=0)            # scalar S
    total = g.op("Gather", [g.op("Shape", ["attention_mask"]), i64("one", 1)], axis=0)  # scalar T
    past = g.op("Sub", [total, seq])
    key_pos = g.op("Range", [i64("zero", 0), total, i64("one", 1)])     # [T]
    query_pos = g.op("Range", [past, total, i64("one", 1)])             # [S]
    causal = g.op("LessOrEqual", [g.op("Unsqueeze", [key_pos, c_axes0]),
                                  g.op("Unsqueeze", [query_pos, c_axes1])])  # [S, T]
    pad = g.op("Cast", [g.op("Unsqueeze", ["attention_mask", i64("ax12", [1, 2])])],
               to=TensorProto.BOOL)                                      # [B, 1, 1, T]
    allowed = g.op("And", [causal, pad])                                 # [B, 1, S, T]
    mask = g.op("Where", [allowed, g.const("zero_f", np.array(0.0, np.float32)),
                          g.const("neg", np.array(np.finfo(np.float32).min, np.float32))])

    cos = g.op("Unsqueeze", [g.op("Gather", [cos_c, "position_ids"], axis=0), c_axes1])  # [B,1,S,hd]
    sin = g.op("Unsqueeze", [g.op("Gather", [sin_c, "position_ids"], axis=0), c_axes1])
    half = i64("half", [hd // 2, hd // 2])

    def rope(x):  # x [B, heads, S, hd]
        x1, x2 = g.op("Split", [x, half], axis=-1, n_out=2)
        rot = g.op("Concat", [g.op("Neg", [x2]), x1], axis=-1)
        return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [rot, sin])])

    def heads(x, n):  # [B, S, n*hd] -> [B, n, S, hd]
        return g.op("Transpose", [g.op("Reshape", [x, i64("shp", [0, 0, n, hd])])], perm=[0, 2, 1, 3])

    rep = nh // nkv
    rep_shape = i64("rep", [1, 1, rep, 1, 1])
    merged = i64("merged", [0, nh, -1, hd])

    def repeat_kv(x):  # [B, nkv, T, hd] -> [B, nh, T, hd]; head h reads kv head h // rep
        if rep == 1:
            return x
        return g.op("Reshape", [g.op("Expand", [g.op("Unsqueeze", [x, c_axes2]), rep_shape]), merged])

    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
    ]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                             ["batch_size", "sequence_length", cfg["vocab_size"]])]
    embed = f32(W["model.embed_tokens.weight"])
    x = g.op("Gather", [g.const("model.embed_tokens.weight", embed), "input_ids"], axis=0)
    for i in range(L):
        p = f"model.layers.{i}."
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(
                f"past_key_values.{i}.{kind}", TensorProto.FLOAT,
                ["batch_size", nkv, "past_sequence_length", hd]))
            outputs.append(helper.make_tensor_value_info(
                f"present.{i}.{kind}", TensorProto.FLOAT,
                ["batch_size", nkv, "total_sequence_length", hd]))
        h = rms(x, p + "input_layernorm.weight")
        q = rope(heads(linear(h, p + "self_attn.q_proj.weight"), nh))
        k = rope(heads(linear(h, p + "self_attn.k_proj.weight"), nkv))
        v = heads(linear(h, p + "self_attn.v_proj.weight"), nkv)
        k_all = g.op_to("Concat", [f"past_key_values.{i}.key", k], f"present.{i}.key", axis=2)
        v_all = g.op_to("Concat", [f"past_key_values.{i}.value", v], f"present.{i}.value", axis=2)
        kt = g.op("Transpose", [repeat_kv(k_all)], perm=[0, 1, 3, 2])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, kt]), c_scale]), mask])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), repeat_kv(v_all)])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), i64("flat", [0, 0, nh * hd])])
        x = g.op("Add", [x, linear(ctx, p + "self_attn.o_proj.weight")])
        h = rms(x, p + "post_attention_layernorm.weight")
        gate = linear(h, p + "mlp.gate_proj.weight")
        act = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
        up = linear(h, p + "mlp.up_proj.weight")
        x = g.op("Add", [x, linear(g.op("Mul", [act, up]), p + "mlp.down_proj.weight")])
    h = rms(x, "model.norm.weight")
    head = W.get("lm_head.weight", W["model.embed_tokens.weight"])
    g.op_to("MatMul", [h, g.const("lm_head.weight.T", f32(head).T.copy())], "logits")

    graph = helper.make_graph(g.nodes, "llama_kv", inputs, outputs, initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="ingot bench/peers/export_onnx_kv.py")
    model.ir_version = 8
    return model, cfg


def save(model, out):
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = out.name + ".data"
    if (out.parent / data).exists():
        (out.parent / data).unlink()
    onnx.save_model(model, str(out), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data, size_threshold=1024)


# -----------------------------------------------------------------------------
# Running and verifying
# -----------------------------------------------------------------------------

class OrtLM:
    """A session over the exported graph, with the cache plumbing."""

    def __init__(self, path, threads=0, opt_level="all", allow_spinning=True):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        if not allow_spinning:  # idle pool threads sleep at once instead of spinning
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = {
            "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
            "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "none": ort.GraphOptimizationLevel.ORT_DISABLE_ALL}[opt_level]
        self.sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        self.past_names = [i.name for i in self.sess.get_inputs() if i.name.startswith("past_key_values.")]
        first = [i for i in self.sess.get_inputs() if i.name.startswith("past_key_values.")][0]
        self.kv_heads, self.head_dim = first.shape[1], first.shape[3]
        self.out_names = [o.name for o in self.sess.get_outputs()]

    def empty_past(self, batch=1):
        z = np.zeros((batch, self.kv_heads, 0, self.head_dim), np.float32)
        return {n: z for n in self.past_names}

    def step(self, ids, past):
        """Runs ids [S] after the cached tokens; returns (logits [S, V], new past)."""
        n_past = next(iter(past.values())).shape[2]
        s = len(ids)
        feeds = {"input_ids": np.asarray(ids, np.int64)[None, :],
                 "attention_mask": np.ones((1, n_past + s), np.int64),
                 "position_ids": np.arange(n_past, n_past + s, dtype=np.int64)[None, :]}
        feeds.update(past)
        outs = self.sess.run(self.out_names, feeds)
        new_past = {n.replace("present.", "past_key_values."): o
                    for n, o in zip(self.out_names[1:], outs[1:])}
        return outs[0][0], new_past


def verify(onnx_path, model_dir, threads=0, prompt=None, n_new=8):
    sys.path.insert(0, str(REPO / "test" / "fixtures"))
    import hf_reference
    prompt = prompt or [1, 9690, 314, 253, 1345, 28, 7566, 436, 284, 260, 4093, 28, 30, 5865, 17]
    lm = OrtLM(onnx_path, threads)
    ref = hf_reference.load(model_dir)
    want = np.asarray(ref.logits(prompt), np.float64)
    got, _ = lm.step(prompt, lm.empty_past())
    rel = float(np.abs(got - want).max() / np.abs(want).max())
    print(f"logits vs float64 reference ({len(prompt)} tokens): rel err {rel:.3g}", file=sys.stderr)
    ok = rel < 1e-4
    # The same prompt in two pieces through the cache.
    cut = len(prompt) // 2
    a, past = lm.step(prompt[:cut], lm.empty_past())
    b, _ = lm.step(prompt[cut:], past)
    rel2 = float(np.abs(np.concatenate([a, b]) - got).max() / np.abs(got).max())
    print(f"cached (split {cut}+{len(prompt) - cut}) vs one pass: rel err {rel2:.3g}", file=sys.stderr)
    ok &= rel2 < 1e-4
    # Greedy with the cache vs greedy recomputing everything.
    seq, past, cached = list(prompt), lm.empty_past(), []
    logits, past = lm.step(seq, past)
    for _ in range(n_new):
        t = int(np.argmax(logits[-1]))
        cached.append(t)
        logits, past = lm.step([t], past)
    seq, full = list(prompt), []
    for _ in range(n_new):
        logits, _ = lm.step(seq, lm.empty_past())
        t = int(np.argmax(logits[-1]))
        full.append(t)
        seq.append(t)
    ref_greedy = [int(t) for t in ref.greedy(prompt, n_new)]
    print(f"greedy with cache {cached}\ngreedy no cache   {full}\nreference greedy  {ref_greedy}",
          file=sys.stderr)
    ok &= cached == full
    print("verify: " + ("OK" if ok else "FAILED"), file=sys.stderr)
    return ok, {"rel_err_logits_vs_f64": rel, "rel_err_cache_split": rel2,
                "greedy_cache": cached, "greedy_nocache": full, "greedy_reference": ref_greedy}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--max-positions", type=int, default=None,
                    help="rows of the cos/sin tables (default: max_position_embeddings)")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args(argv)
    model, _ = build(args.model_dir, args.max_positions)
    save(model, args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    if args.verify:
        ok, _ = verify(args.output, args.model_dir, args.threads)
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
