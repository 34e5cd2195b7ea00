"""`ingot compile DIR` on hostile Hugging Face directories (issue 17): JSON
nested deep enough to overflow a recursive parser, sizes in config.json
that would allocate without bound, NaN and infinity in the weights, bytes
no tensor owns, token ids outside the vocabulary, norm epsilons that are
not positive, weights the config does not describe. Each must end in exit
code 1 with a message naming the file and the key or tensor, and leave no
artifact behind (expect_error, shared with test_hf_errors.py).

Every input is a tiny fixture model (test/fixtures/hf_models.py) with one
thing changed.
"""
import json
import shutil
import struct
import sys
import time

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot
from test_hf_errors import edit_config, expect_error, read_st, write_st

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import quantized_checkpoints as qc  # noqa: E402

UP_PROJ = "model.layers.0.mlp.up_proj.weight"
Q_PROJ = "model.layers.0.self_attn.q_proj"
DEPTH = 100_000  # levels of nesting in the deep-JSON cases
LIMIT = 512      # compiler/JsonLimits.h: kMaxJsonDepth


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_hostile")
    names = ("llama", "llama_tied_bf16", "qwen2", "gemma3", "gpt2", "phi3")
    return {name: hf_models.make_model(name, root) for name in names}


@pytest.fixture
def copy_of(pristine, tmp_path):
    """copy_of(case): a private copy of a fixture model to break."""
    return lambda name: shutil.copytree(pristine[name], tmp_path / name)


@pytest.fixture
def model(copy_of):
    return copy_of("llama")


def edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def compiles(model_dir, tmp_path):
    out = tmp_path / "ok.ingot"
    proc = ingot("compile", model_dir, "-o", out)
    assert proc.returncode == 0, describe(proc)
    assert out.is_file()


def vocab_of(model_dir):
    return json.loads((model_dir / "config.json").read_text())["vocab_size"]


# -- 1. JSON nested deeper than the parser's stack ---------------------------

def deep(levels):
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("name", ["config.json", "generation_config.json",
                                  "tokenizer.json", "tokenizer_config.json"])
def test_deep_json_file(model, tmp_path, name):
    prefix = '{"a": '
    (model / name).write_text(prefix + deep(DEPTH) + "}")
    # '{' is level 1 and the first '[' level 2: level LIMIT + 1 opens at
    # the (LIMIT - 1)-th '[' after it.
    at = len(prefix) + LIMIT - 1
    expect_error(model, tmp_path, f"{model / name}: JSON nested deeper than "
                 f"{LIMIT} levels at byte {at}")


def test_deep_safetensors_header(model, tmp_path):
    st = model / "model.safetensors"
    header, data = read_st(st)
    prefix = json.dumps(header)[:-1] + ', "deep": '
    text = prefix + deep(DEPTH) + "}"
    st.write_bytes(struct.pack("<Q", len(text)) + text.encode() + data)
    at = 8 + len(prefix) + LIMIT - 1  # counted in the file
    expect_error(model, tmp_path, f"{st}: JSON nested deeper than {LIMIT} "
                 f"levels at byte {at}")


def test_depth_limit_is_exact_and_ignores_strings(model, tmp_path):
    # config.json is level 1, so LIMIT - 1 more levels are the most allowed;
    # brackets and escaped quotes inside a string do not nest.
    edit_config(model, lambda c: c.update(
        extra=json.loads(deep(LIMIT - 1)), text='\\"[[[' * 1000))
    compiles(model, tmp_path)
    edit_config(model, lambda c: c.update(extra=json.loads(deep(LIMIT))))
    expect_error(model, tmp_path, "config.json", f"deeper than {LIMIT} levels")


# -- 2. Sizes checked before anything is sized by them ------------------------

SIZES = [
    ("llama", "num_hidden_layers", 2**63 - 1, 1024),
    ("llama", "num_hidden_layers", 2**31 - 1, 1024),
    ("llama", "num_hidden_layers", 0, 1024),
    ("llama", "hidden_size", 2**40, 2**20),
    ("llama", "intermediate_size", 2**40, 2**22),
    ("llama", "num_attention_heads", 2**20, 4096),
    ("llama", "num_key_value_heads", 2**20, 4096),
    ("llama", "head_dim", 2**20, 2**16),
    ("llama", "vocab_size", 2**30, 2**24),
    ("llama", "max_position_embeddings", 2**40, 2**24),
    ("gemma3", "num_hidden_layers", 2**31 - 1, 1024),
    ("gpt2", "n_layer", 2**31 - 1, 1024),
    ("gpt2", "n_embd", 2**40, 2**20),
]


@pytest.mark.parametrize("case,key,value,limit", SIZES,
                         ids=[f"{c}-{k}-{v}" for c, k, v, _ in SIZES])
def test_size_out_of_range(copy_of, tmp_path, case, key, value, limit):
    model_dir = copy_of(case)
    edit_config(model_dir, lambda c: c.update({key: value}))
    start = time.monotonic()
    expect_error(model_dir, tmp_path, "config.json", f"'{key}' is {value}",
                 f"expected 1..{limit}")
    # Refused from the config alone (2^31 - 1 layers used to take 31 s and
    # 17 GB before failing).
    assert time.monotonic() - start < 10


# -- 3. Weights: NaN and infinity ---------------------------------------------

BITS = {"nan": {"F32": 0x7fc00000, "F16": 0x7e00, "BF16": 0x7fc0},
        "inf": {"F32": 0x7f800000, "F16": 0x7c00, "BF16": 0x7f80}}


def poison(path, key, element, kind):
    """Sets one element of tensor `key` to a NaN or an infinity."""
    header, data = read_st(path)
    dtype = header[key]["dtype"]
    size = 4 if dtype == "F32" else 2
    at = header[key]["data_offsets"][0] + element * size
    bits = BITS[kind][dtype].to_bytes(size, "little")
    write_st(path, header, data[:at] + bits + data[at + size:])


# (case, tensor, element): one per way a tensor is read — whole (F32, BF16,
# F16), Gemma's 1 + w norms, GPT-2's c_attn split by columns (row 5,
# column 150 lies in v's columns 128..191) and Phi-3's qkv_proj split by
# rows (row 70 of 128 lies in k's rows 64..95).
POISONED = [
    ("llama", UP_PROJ, 123, "nan"),
    ("llama_tied_bf16", "model.embed_tokens.weight", 7, "nan"),
    ("qwen2", "model.layers.1.self_attn.k_proj.bias", 3, "inf"),
    ("gemma3", "model.layers.0.input_layernorm.weight", 9, "inf"),
    ("gpt2", "transformer.h.1.attn.c_attn.weight", 5 * 192 + 150, "nan"),
    ("phi3", "model.layers.0.self_attn.qkv_proj.weight", 70 * 64 + 3, "inf"),
]


@pytest.mark.parametrize("case,key,element,kind", POISONED,
                         ids=[c for c, *_ in POISONED])
def test_non_finite_weight(copy_of, tmp_path, case, key, element, kind):
    model_dir = copy_of(case)
    st = model_dir / "model.safetensors"
    poison(st, key, element, kind)
    what = "a NaN" if kind == "nan" else "an infinity"
    expect_error(model_dir, tmp_path,
                 f"{st}: tensor '{key}' has {what} at element {element}")


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_hostile_packed")
    return {name: qc.make_case(name, root).model
            for name in ("gptq_sym4", "fp8_tensor")}


@pytest.mark.parametrize("case,key,element,kind", [
    ("gptq_sym4", Q_PROJ + ".scales", 3, "nan"),          # F16 scales
    ("fp8_tensor", Q_PROJ + ".weight_scale", 0, "inf"),   # F32 scale
    ("fp8_tensor", Q_PROJ + ".weight", 11, "nan"),        # e4m3 codes
])
def test_non_finite_packed_weight(packed, tmp_path, case, key, element, kind):
    model_dir = shutil.copytree(packed[case], tmp_path / case)
    st = model_dir / "model.safetensors"
    header, data = read_st(st)
    if header[key]["dtype"] == "F8_E4M3":  # S.1111.111 is e4m3's NaN
        at = header[key]["data_offsets"][0] + element
        write_st(st, header, data[:at] + b"\x7f" + data[at + 1:])
    else:
        poison(st, key, element, kind)
    what = "a NaN" if kind == "nan" else "an infinity"
    expect_error(model_dir, tmp_path,
                 f"{st}: tensor '{key}' has {what} at element {element}")


# -- 3. Weights: bytes no tensor owns -----------------------------------------

def test_trailing_bytes_after_the_data(model, tmp_path):
    st = model / "model.safetensors"
    header, data = read_st(st)
    st.write_bytes(st.read_bytes() + b"\0" * 16)
    expect_error(model, tmp_path, str(st), "16 trailing bytes in the "
                 f"{len(data) + 16}-byte data region")


def test_gap_between_tensors(model, tmp_path):
    st = model / "model.safetensors"
    header, data = read_st(st)
    last = max((k for k in header if k != "__metadata__"),
               key=lambda k: header[k]["data_offsets"][0])
    begin, end = header[last]["data_offsets"]
    header[last]["data_offsets"] = [begin + 8, end + 8]
    write_st(st, header, data[:begin] + b"\0" * 8 + data[begin:])
    expect_error(model, tmp_path, str(st), f"bytes {begin} to {begin + 8}",
                 "belong to no tensor", last)


# -- 3. Token ids and epsilons --------------------------------------------------

TOKEN_IDS = [
    ("config.json", "eos_token_id", "vocab"),
    ("config.json", "bos_token_id", -3),
    ("config.json", "pad_token_id", "vocab+7"),
    ("config.json", "pad_token_id", "three"),
    ("config.json", "eos_token_id", [2, "vocab"]),
    ("generation_config.json", "eos_token_id", ["vocab+5"]),
    ("generation_config.json", "bos_token_id", 1.5),
]


@pytest.mark.parametrize("name,key,value", TOKEN_IDS,
                         ids=[f"{n}-{k}-{v}" for n, k, v in TOKEN_IDS])
def test_bad_token_id(model, tmp_path, name, key, value):
    vocab = vocab_of(model)
    def resolve(v):
        if isinstance(v, list):
            return [resolve(x) for x in v]
        if isinstance(v, str) and v.startswith("vocab"):
            return vocab + int(v[6:] or 0)
        return v
    value = resolve(value)
    edit_json(model / name, lambda c: c.update({key: value}))
    bad = next((v for v in (value if isinstance(value, list) else [value])
                if isinstance(v, int) and not 0 <= v < vocab), None)
    if bad is None:  # the wrong type
        expect_error(model, tmp_path, f"{model / name}: '{key}' must be a "
                     "token id")
    else:
        expect_error(model, tmp_path, f"{model / name}: '{key}' = {bad} is "
                     f"not a token id (expected 0..{vocab - 1}",
                     f"vocab_size {vocab}")


def test_bad_token_text_type(model, tmp_path):
    path = model / "tokenizer_config.json"
    edit_json(path, lambda c: c.update(eos_token=5))
    expect_error(model, tmp_path, f"{path}: 'eos_token' must be a string")


def test_pad_token_id_minus_one_means_none(model, tmp_path):
    # Old Llama conversions wrote -1 for "no padding token".
    edit_config(model, lambda c: c.update(pad_token_id=-1))
    compiles(model, tmp_path)


EPSILONS = [("llama", "rms_norm_eps", 0), ("llama", "rms_norm_eps", -1e-5),
            ("llama", "rms_norm_eps", 1e-50), ("llama", "rms_norm_eps", 1e300),
            ("gemma3", "rms_norm_eps", 0), ("gpt2", "layer_norm_epsilon", 0)]


@pytest.mark.parametrize("case,key,value", EPSILONS,
                         ids=[f"{c}-{v}" for c, _, v in EPSILONS])
def test_epsilon_not_positive_and_finite(copy_of, tmp_path, case, key, value):
    model_dir = copy_of(case)
    edit_config(model_dir, lambda c: c.update({key: value}))
    expect_error(model_dir, tmp_path, "config.json", f"'{key}' is",
                 "must be positive and finite")


def test_epsilon_not_a_number(model, tmp_path):
    edit_config(model, lambda c: c.update(rms_norm_eps="1e-5"))
    expect_error(model, tmp_path, "config.json", "'rms_norm_eps' must be a "
                 "number")


def test_epsilon_nan_literal_is_not_json(model, tmp_path):
    edit_config(model, lambda c: c.update(rms_norm_eps=float("nan")))
    expect_error(model, tmp_path, f"{model / 'config.json'}: not valid JSON")


# -- 3. Weights the config does not describe -----------------------------------

def add_tensors(path, new):
    """Appends tensors {name: float32 array} to a safetensors file."""
    header, data = read_st(path)
    for name, array in new.items():
        raw = array.astype(np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    write_st(path, header, data)


def test_more_layers_than_num_hidden_layers(model, tmp_path):
    st = model / "model.safetensors"
    header, _ = read_st(st)
    extra = {k.replace(".layers.1.", ".layers.2."): np.zeros(v["shape"])
             for k, v in header.items() if ".layers.1." in k}
    add_tensors(st, extra)
    first = sorted(extra)[0]
    expect_error(model, tmp_path, f"{st}: tensor '{first}' is for layer 2",
                 "num_hidden_layers = 2")


def test_fewer_num_hidden_layers_than_weights(model, tmp_path):
    edit_config(model, lambda c: c.update(num_hidden_layers=1))
    expect_error(model, tmp_path, "'model.layers.1.", "is for layer 1",
                 "num_hidden_layers = 1")


def test_unknown_tensor_is_refused(model, tmp_path):
    add_tensors(model / "model.safetensors",
                {"model.mystery.weight": np.ones(4)})
    expect_error(model, tmp_path, "'model.mystery.weight'", "is not used by "
                 "the LlamaForCausalLM graph")


def test_buffers_transformers_ignores_are_ignored(copy_of, tmp_path):
    # Older checkpoints saved rotary inv_freq; a tied model may still store
    # the lm_head that tie_word_embeddings replaces by the embedding.
    model_dir = copy_of("llama_tied_bf16")
    header, _ = read_st(model_dir / "model.safetensors")
    add_tensors(model_dir / "model.safetensors", {
        "model.layers.0.self_attn.rotary_emb.inv_freq": np.ones(8),
        "lm_head.weight": np.zeros(header["model.embed_tokens.weight"]["shape"]),
    })
    compiles(model_dir, tmp_path)


# -- 4. Tokenizer errors name the file's path ----------------------------------

def test_tokenizer_json_error_names_path(model, tmp_path):
    path = model / "tokenizer.json"
    edit_json(path, lambda t: t["model"].update(type="Unigram"))
    expect_error(model, tmp_path, f"{path}: model.type is 'Unigram'")


def test_tokenizer_config_error_names_path(model, tmp_path):
    path = model / "tokenizer_config.json"
    edit_json(path, lambda t: t.update(bos_token="<no such token>"))
    expect_error(model, tmp_path, f"{path}: bos_token '<no such token>' is "
                 "not a token of tokenizer.json")


def test_tokenizer_config_not_an_object_names_path(model, tmp_path):
    path = model / "tokenizer_config.json"
    path.write_text("[1, 2]")
    expect_error(model, tmp_path, f"{path}: the top level is not an object")
