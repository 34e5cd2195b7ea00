"""`ingot compile DIR` on broken Hugging Face directories: every defect of
the safetensors files, the shard index or config.json must end in exit code
1 with a message that names the file and, where there is one, the tensor or
config key, and must leave no artifact behind.

Each test copies a valid tiny model (test/fixtures/hf_models.py) and breaks
one thing. Safetensors files are rewritten here byte by byte, so the damage
is exactly what the test says, whatever the safetensors package would allow.
"""
import json
import re
import shutil
import struct
import sys

import pytest

from ingot_testlib import SOURCE_DIR, assert_clean_failure, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402

Q_PROJ = "model.layers.0.self_attn.q_proj.weight"
SUPPORTED = ["LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
             "Gemma2ForCausalLM", "Gemma3ForCausalLM", "MistralForCausalLM",
             "Phi3ForCausalLM", "GPT2LMHeadModel"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """Valid single-file and sharded models, written once."""
    root = tmp_path_factory.mktemp("hf_pristine")
    return {name: hf_models.make_model(name, root)
            for name in ("llama", "sharded")}


@pytest.fixture
def model(pristine, tmp_path):
    """A private copy of the single-file llama to break."""
    return shutil.copytree(pristine["llama"], tmp_path / "llama")


@pytest.fixture
def sharded(pristine, tmp_path):
    return shutil.copytree(pristine["sharded"], tmp_path / "sharded")


# -- Helpers ------------------------------------------------------------------

def read_st(path):
    """(header dict, data bytes) of a safetensors file."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def write_st(path, header, data):
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def edit_header(path, change):
    """Rewrites the header through change(header); the data stays."""
    header, data = read_st(path)
    change(header)
    write_st(path, header, data)


def edit_config(model_dir, change):
    path = model_dir / "config.json"
    cfg = json.loads(path.read_text())
    change(cfg)
    path.write_text(json.dumps(cfg, indent=2))


def mentions(text, needle):
    if isinstance(needle, re.Pattern):
        return bool(needle.search(text))
    return needle.lower() in text.lower()


def expect_error(model_dir, tmp_path, *needles):
    """Compile fails with exit 1, names each needle, and writes nothing."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "model.ingot"
    proc = ingot("compile", model_dir, "-o", out)
    assert_clean_failure(proc)
    for needle in needles:
        assert mentions(proc.stderr, needle), (
            f"stderr should mention {needle!r}\n" + describe(proc))
    assert not out.exists(), "a failed compile left an artifact behind"
    assert not list(out_dir.iterdir()), (
        f"a failed compile left files behind: {list(out_dir.iterdir())}")
    return proc


# -- The safetensors file itself ----------------------------------------------

def test_truncated_file_names_file_and_tensor(model, tmp_path):
    st = model / "model.safetensors"
    header, data = read_st(st)
    # Cut inside the data of the tensor that ends last.
    last = max((k for k in header if k != "__metadata__"),
               key=lambda k: header[k]["data_offsets"][1])
    raw = st.read_bytes()
    st.write_bytes(raw[:len(raw) - 10])
    expect_error(model, tmp_path, "model.safetensors", last)


def test_file_shorter_than_length_prefix(model, tmp_path):
    (model / "model.safetensors").write_bytes(b"\x10\x00\x00")
    expect_error(model, tmp_path, "model.safetensors", "truncated")


def test_header_length_past_eof(model, tmp_path):
    st = model / "model.safetensors"
    raw = st.read_bytes()
    st.write_bytes(struct.pack("<Q", len(raw) * 4) + raw[8:])
    expect_error(model, tmp_path, "model.safetensors", "header length")


def test_header_is_not_json(model, tmp_path):
    st = model / "model.safetensors"
    _, data = read_st(st)
    text = b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]'
    st.write_bytes(struct.pack("<Q", len(text)) + text + data)
    expect_error(model, tmp_path, "model.safetensors", "JSON")


def test_unknown_dtype_names_key_and_dtype(model, tmp_path):
    edit_header(model / "model.safetensors",
                lambda h: h[Q_PROJ].update(dtype="Q4_K"))
    expect_error(model, tmp_path, "model.safetensors", Q_PROJ, "Q4_K")


def test_non_float_weight_dtype_names_key_and_dtype(model, tmp_path):
    def to_int32(h):  # same byte size, so only the dtype is wrong
        h[Q_PROJ]["dtype"] = "I32"
    edit_header(model / "model.safetensors", to_int32)
    expect_error(model, tmp_path, "model.safetensors", Q_PROJ, "I32")


def test_offsets_out_of_range(model, tmp_path):
    st = model / "model.safetensors"
    header, data = read_st(st)
    begin, end = header[Q_PROJ]["data_offsets"]
    header[Q_PROJ]["data_offsets"] = [len(data) - (end - begin) + 64,
                                      len(data) + 64]
    write_st(st, header, data)
    expect_error(model, tmp_path, "model.safetensors", Q_PROJ)


def test_offsets_disagree_with_shape(model, tmp_path):
    def grow(h):
        rows, cols = h[Q_PROJ]["shape"]
        h[Q_PROJ]["shape"] = [rows + 1, cols]
    edit_header(model / "model.safetensors", grow)
    expect_error(model, tmp_path, "model.safetensors", Q_PROJ)


def test_overlapping_tensors(model, tmp_path):
    st = model / "model.safetensors"
    header, data = read_st(st)
    keys = sorted((k for k in header if k != "__metadata__"),
                  key=lambda k: header[k]["data_offsets"][0])
    # Give a tensor a neighbour's offsets shifted into its own range, with
    # a shape that matches the span, so only the overlap is wrong.
    a, b = keys[0], keys[1]
    a_begin, a_end = header[a]["data_offsets"]
    b_begin, b_end = header[b]["data_offsets"]
    shift = (a_end - a_begin) // 2 // 4 * 4
    header[b]["data_offsets"] = [b_begin - shift, b_end - shift]
    write_st(st, header, data)
    proc = expect_error(model, tmp_path, "model.safetensors", "overlap")
    assert mentions(proc.stderr, a) and mentions(proc.stderr, b), describe(proc)


def test_negative_shape(model, tmp_path):
    edit_header(model / "model.safetensors",
                lambda h: h[Q_PROJ].update(shape=[-1, 64]))
    expect_error(model, tmp_path, "model.safetensors", Q_PROJ)


# -- Tensors the architecture needs -------------------------------------------

def drop_tensor(path, key):
    """Removes `key` and its bytes, so the file stays exactly covered."""
    header, data = read_st(path)
    begin, end = header.pop(key)["data_offsets"]
    for k, v in header.items():
        if k != "__metadata__" and v["data_offsets"][0] >= end:
            v["data_offsets"] = [o - (end - begin) for o in v["data_offsets"]]
    write_st(path, header, data[:begin] + data[end:])


def test_missing_tensor_names_key(model, tmp_path):
    drop_tensor(model / "model.safetensors", "model.layers.1.mlp.up_proj.weight")
    expect_error(model, tmp_path, "model.layers.1.mlp.up_proj.weight")


def test_wrong_shape_names_file_key_and_both_shapes(model, tmp_path):
    st = model / "model.safetensors"
    header, data = read_st(st)
    rows, cols = header[Q_PROJ]["shape"]
    header[Q_PROJ]["shape"] = [cols, rows] if rows != cols else [rows * 2,
                                                                  cols // 2]
    actual = header[Q_PROJ]["shape"]
    write_st(st, header, data)
    expect_error(model, tmp_path, "model.safetensors", Q_PROJ,
                 f"[{actual[0]}, {actual[1]}]", f"[{rows}, {cols}]")


# -- config.json ----------------------------------------------------------------

def test_missing_config_key(model, tmp_path):
    edit_config(model, lambda c: c.pop("num_hidden_layers"))
    expect_error(model, tmp_path, "config.json", "num_hidden_layers")


def test_config_not_json(model, tmp_path):
    (model / "config.json").write_text('{"architectures": ["LlamaForCausalLM"')
    expect_error(model, tmp_path, "config.json")


def test_heads_not_multiple_of_kv_heads(model, tmp_path):
    edit_config(model, lambda c: c.update(num_key_value_heads=3))
    expect_error(model, tmp_path, "config.json", "num_key_value_heads")


def test_hidden_not_divisible_by_heads(model, tmp_path):
    def change(c):
        c.pop("head_dim", None)
        c.update(num_attention_heads=6, num_key_value_heads=6)
    edit_config(model, change)
    expect_error(model, tmp_path, "config.json", "hidden_size",
                 "num_attention_heads")


def test_unknown_architecture_lists_known_ones(model, tmp_path):
    edit_config(model, lambda c: c.update(architectures=["GemmaForCausalLM"]))
    expect_error(model, tmp_path, "config.json", "GemmaForCausalLM",
                 *SUPPORTED)


@pytest.mark.parametrize("rope_type", ["yarn", "dynamic", "longrope"])
def test_unsupported_rope_scaling(model, tmp_path, rope_type):
    edit_config(model, lambda c: c.update(rope_scaling={
        "rope_type": rope_type, "factor": 4.0,
        "original_max_position_embeddings": 128}))
    expect_error(model, tmp_path, "config.json", "rope_scaling", rope_type)


def test_unsupported_activation(model, tmp_path):
    edit_config(model, lambda c: c.update(hidden_act="relu2"))
    expect_error(model, tmp_path, "config.json", "hidden_act", "relu2")


# -- Sharded checkpoints ----------------------------------------------------------

def test_index_names_missing_shard(sharded, tmp_path):
    index = json.loads((sharded / "model.safetensors.index.json").read_text())
    shard = sorted(set(index["weight_map"].values()))[-1]
    (sharded / shard).unlink()
    expect_error(sharded, tmp_path, "model.safetensors.index.json", shard)


def test_index_maps_key_to_shard_without_it(sharded, tmp_path):
    path = sharded / "model.safetensors.index.json"
    index = json.loads(path.read_text())
    shards = sorted(set(index["weight_map"].values()))
    key = next(k for k, v in sorted(index["weight_map"].items())
               if v == shards[0])
    index["weight_map"][key] = shards[1]
    path.write_text(json.dumps(index))
    expect_error(sharded, tmp_path, "model.safetensors.index.json", key,
                 shards[1])


def test_index_path_outside_model_dir(sharded, tmp_path):
    path = sharded / "model.safetensors.index.json"
    index = json.loads(path.read_text())
    key = sorted(index["weight_map"])[0]
    index["weight_map"][key] = "../elsewhere.safetensors"
    path.write_text(json.dumps(index))
    expect_error(sharded, tmp_path, "model.safetensors.index.json", key)


def test_no_weights_at_all(model, tmp_path):
    (model / "model.safetensors").unlink()
    expect_error(model, tmp_path, "model.safetensors")
