"""Shared by the `ingot compile --quant` tests (test_quant_models.py,
test_quant_flags.py, test_act_quant.py): tiny random Hugging Face models
(test/fixtures/hf_models.py), each compiled once per setting, the
artifact's tensors as bytes, and the float64 reference on the weights
those bytes stand for."""
import json
import re
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot
from test_quant_format import dequantize

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import hf_reference  # noqa: E402

MODELS = ["llama", "llama_tied_bf16", "qwen2"]
# setting -> (compile flags, stored format, group; 0 = K, per channel)
QUANTS = {
    "int8": (["--quant", "int8"], "q8", 32),
    # int4 keeps its lm_head at int8 by default (test_int4_lm_head_is_int8);
    # `same` puts it in the setting's format, which the checks below expect.
    "int4": (["--quant", "int4", "--quant-scheme", "sym", "--quant-lm-head", "same"],
             "q4", 32),
    "int4-asym": (["--quant", "int4", "--quant-lm-head", "same"], "q4m", 32),
    "int4-g48": (["--quant", "int4", "--quant-scheme", "sym", "--group-size", "48",
                  "--quant-lm-head", "same"], "q4", 48),  # K=64: 48+16
    "int8-channel": (["--quant", "int8", "--group-size", "0"], "q8", 0),
    "fp8": (["--quant", "fp8"], "f8e4m3", 0),
}
COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]
LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("hf")
    return {name: hf_models.make_model(name, out) for name in MODELS}


@pytest.fixture(scope="module")
def source(models):
    """Source weights as float32 (exact: every stored F32/F16/BF16 value is
    one), keyed by safetensors name."""
    return {name: {n: w.astype(np.float32) for n, w in
                   hf_reference.load_weights(path).items()}
            for name, path in models.items()}


class Artifact:
    def __init__(self, path):
        self.path = path
        self.data = path.read_bytes()
        proc = ingot("inspect", path, "--json")
        assert proc.returncode == 0, describe(proc)
        self.info = json.loads(proc.stdout)
        self.weights_offset = next(s["offset"] for s in self.info["sections"]
                                   if s["name"] == "weights")

    def tensor_bytes(self, t):
        at = self.weights_offset + t["offset"]
        return np.frombuffer(self.data[at:at + t["bytes"]], dtype=np.uint8)

    def quantised(self):
        """(tensor entry, source parts, format, group) of each quantised tensor."""
        for t in self.info["tensors"]:
            if "@" in t["name"]:
                base, suffix = t["name"].rsplit("@", 1)
                fmt, group = re.fullmatch(r"(q8|q4m|q4|f8e4m3)g(\d+)", suffix).groups()
                yield t, base.split("+"), fmt, int(group)


@pytest.fixture(scope="module")
def compiled(models, tmp_path_factory):
    out, cache = tmp_path_factory.mktemp("artifacts"), {}

    def get(name, *flags):
        key = (name,) + flags
        if key not in cache:
            path = out / f"{name}-{len(cache)}.ingot"
            proc = ingot("compile", models[name], "-o", path, *COMPILE_FLAGS, *flags,
                         timeout=300)
            assert proc.returncode == 0, describe(proc)
            cache[key] = Artifact(path)
        return cache[key]
    return get


def expected_quantised(weights):
    """Source names that must be quantised: every linear weight, and the
    lm_head (the tied embedding's copy when there is no lm_head.weight)."""
    names = {n for n in weights if n.split(".")[-2] in LINEARS and n.endswith(".weight")}
    return names | {"lm_head.weight" if "lm_head.weight" in weights
                    else "model.embed_tokens.weight"}


def dequantised_reference(model_dir, art, embedding_quantised=False):
    """The float64 reference with every quantised weight replaced by what its
    artifact bytes stand for (merged tensors split back by source rows). A
    tied model's quantised embedding copy serves the lm_head; the gather
    keeps the original table (were it reading the copy, the logits would
    miss test_quant_models.py's DEQUANT_RTOL by far) unless
    `embedding_quantised` (--quant-embed): then it reads the table the
    artifact quantised for it, the lm_head's own when they share one."""
    ref = hf_reference.load(model_dir)
    embed = "model.embed_tokens.weight"
    head = art.info.get("lm_head", {}).get("tensor")
    tables = [t["name"] for t, parts, _, _ in art.quantised() if parts == [embed]]
    gather = next((n for n in tables if n != head), head)
    for t, parts, fmt, group in art.quantised():
        n, k = t["shape"]
        w = dequantize(fmt, art.tensor_bytes(t).reshape(n, -1), k, group)
        rows = np.cumsum([ref.w[p].shape[0] for p in parts])[:-1]
        for p, piece in zip(parts, np.split(w, rows)):
            if p != embed:
                ref.w[p] = piece
                if p == "lm_head.weight":
                    ref.lm_head = piece
                continue
            if t["name"] == head:
                ref.lm_head = piece
            if embedding_quantised and t["name"] == gather:
                ref.w[p] = piece
    return ref
