"""A Llama-3.2-1B-shaped model directory for the GPU check, weights unwritten.

`gpu-check.sh prepare` compiles this directory with --weights=external: the
compiler reads only the safetensors header, so the data region here is a
sparse file of zeros (2.5 GB on paper, a few KB on disk) and the artifact
carries no weights. On the GPU machine, gpu_check_big.py builds the same
model with transformers from this config.json and random seeded bf16
weights, saves it as model.safetensors, and runs the artifact with
--weights on those bytes. The header written here lists exactly the tensors
transformers saves for LlamaForCausalLM with tied embeddings.

    python scripts/gpu_check_big_model.py OUT_DIR
"""
import json
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "fixtures"))
from hf_tokenizers import special_ids, tokenizer_config, tokenizer_for  # noqa: E402

HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM = 2048, 16, 32, 8, 64
INTERMEDIATE, VOCAB = 8192, 128256


def config(ids):
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": HIDDEN, "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM, "intermediate_size": INTERMEDIATE,
        "vocab_size": VOCAB, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
        "rope_scaling": {"rope_type": "llama3", "factor": 32.0,
                         "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192},
        "hidden_act": "silu", "tie_word_embeddings": True,
        "attention_bias": False, "mlp_bias": False, "torch_dtype": "bfloat16",
        "bos_token_id": ids["bos_token_id"], "eos_token_id": ids["generation_eos"],
    }


def tensors():
    """(name, shape) of every tensor transformers saves, sorted by name."""
    out = [("model.embed_tokens.weight", [VOCAB, HIDDEN]),
           ("model.norm.weight", [HIDDEN])]
    kv = KV_HEADS * HEAD_DIM
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        out += [(p + "input_layernorm.weight", [HIDDEN]),
                (p + "post_attention_layernorm.weight", [HIDDEN]),
                (p + "self_attn.q_proj.weight", [HEADS * HEAD_DIM, HIDDEN]),
                (p + "self_attn.k_proj.weight", [kv, HIDDEN]),
                (p + "self_attn.v_proj.weight", [kv, HIDDEN]),
                (p + "self_attn.o_proj.weight", [HIDDEN, HEADS * HEAD_DIM]),
                (p + "mlp.gate_proj.weight", [INTERMEDIATE, HIDDEN]),
                (p + "mlp.up_proj.weight", [INTERMEDIATE, HIDDEN]),
                (p + "mlp.down_proj.weight", [HIDDEN, INTERMEDIATE])]
    return sorted(out)


def write_header_only(path):
    """A valid safetensors file whose bf16 data region is a hole."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in tensors():
        size = 2
        for d in shape:
            size *= d
        header[name] = {"dtype": "BF16", "shape": shape,
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + offset)
    return offset


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    tok = tokenizer_for("smollm")
    ids = special_ids("smollm", tok)
    (out / "config.json").write_text(json.dumps(config(ids), indent=2))
    (out / "generation_config.json").write_text(json.dumps(
        {"bos_token_id": ids["bos_token_id"], "eos_token_id": ids["generation_eos"]}))
    tok.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(
        json.dumps(tokenizer_config("smollm")))
    data = write_header_only(out / "model.safetensors")
    print(f"{out}: {len(tensors())} tensors, {data / 2**30:.2f} GiB of bf16 "
          "left unwritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
