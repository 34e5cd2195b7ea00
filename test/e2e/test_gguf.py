"""`ingot compile model.gguf`: tiny random GGUF files (test/fixtures/
gguf_models.py) in every tensor type the importer reads, checked end to end
against the float64 reference (hf_reference.py) run on exactly the values
the GGUF stands for (gguf.quants.dequantize, Q/K rows un-permuted).

  - logits and greedy tokens: llama (GQA 4/2) in each type, qwen2 (biases,
    no Q/K permutation) and a tied-embedding llama (head_dim != hidden/heads);
  - `ingot inspect`: Q8_0/Q4_0/Q4_1 kept as q8/q4/q4m g32 (embedding too),
    converted types in q8 / q4m g32 with a note on stderr, floats as stored;
  - the tokenizer from tokenizer.ggml.* encodes like tokenizer.json;
  - damaged or unsupported files: test_gguf_errors.py.

Relative error here is max |a - b| / max |b| over the last position's
logits (a = ingot, b = reference).
"""
import json
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot
from test_llm import check_greedy
from test_quant_format import dequantize, quantize

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import gguf_models  # noqa: E402
import hf_reference  # noqa: E402
from gguf import GGMLQuantizationType as QT  # noqa: E402

COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]

# Exact types: ingot holds the GGUF's values bit for bit (floats as stored,
# Q8_0/Q4_0/Q4_1 blocks as q8/q4/q4m g32) and computes in f32, widening each
# block in registers; it differs from the float64 reference only by f32
# rounding over dot products of K <= 512 terms, a few layers deep: ~1e-6.
# 1e-4 is test_llm.py's bound; a wrongly decoded block (nibble order,
# scale, min) or a Q/K row left permuted moves the logits by 1e-2 and more.
EXACT_RTOL = 1e-4
EXACT = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1")
# The other types (compiler/gguf/GgufRepack.h): Q5_0 is rewritten as q8
# g32 with every value unchanged, so EXACT_RTOL holds. Q6_K (q8 g16) and
# Q4_K (q4m g32) keep their codes with each group's scale (and minimum)
# rounded to f16: a value moves by at most 2^-11 of |scale·code| + |min|,
# which these random 2-layer models amplify in the logits to 9.5e-4..1.2e-3
# (Q6_K) and 7.1e-4..2.0e-3 (Q4_K) over 6 prompts, hence 5e-3. (Requantised
# from their values, as before the repacking, they were 1.4e-2..2.6e-2 and
# 3.1e-2..4.1e-2.) Q5_1 and Q5_K fit no format and are requantised to q8
# g32: each weight moves by up to amax/254 of its group, 1.4e-2..2.8e-2 and
# 4.8e-3..1.0e-2 in the logits, hence 0.1. Every type is also held to EXACT_RTOL against the reference run on
# the values the artifact stores (decoded from its bytes), where only f32
# rounding is left.
FORMAT = {"Q8_0": ("q8", 32), "Q4_0": ("q4", 32), "Q4_1": ("q4m", 32),
          "Q5_0": ("q8", 32), "Q6_K": ("q8", 16), "Q4_K": ("q4m", 32),
          "Q5_1": ("q8", 32), "Q5_K": ("q8", 32)}
ROUNDED_SCALES = ("Q6_K", "Q4_K")
REQUANTISED = ("Q5_1", "Q5_K")
CONVERTED = ("Q5_0",) + ROUNDED_SCALES + REQUANTISED  # each gets a note
GGUF_RTOL = {"Q6_K": 5e-3, "Q4_K": 5e-3, "Q5_1": 0.1, "Q5_K": 0.1}
KQUANTS = ("Q4_K", "Q5_K", "Q6_K")
FLOAT_DTYPES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}

MODELS = ([("llama", t) for t in EXACT + ("Q5_0", "Q5_1")]
          + [("llama_k", t) for t in KQUANTS]
          + [("qwen2", "Q8_0"), ("qwen3", "Q4_1"), ("llama_tied", "Q4_0")])
IDS = [f"{c}-{t}" for c, t in MODELS]


# -----------------------------------------------------------------------------
# Fixtures: GGUF cases, their artifacts and references, built once per module
# -----------------------------------------------------------------------------

class Built:
    def __init__(self, case, art, proc):
        self.case, self.art, self.compile = case, art, proc
        self.ref = hf_reference.load(case.ref)
        self.weights = hf_reference.load_weights(case.ref)  # float64, exact
        proc = ingot("inspect", art, "--json")
        assert proc.returncode == 0, describe(proc)
        self.info = json.loads(proc.stdout)
        self._stored = None
        self.weights_at = next(s["offset"] for s in self.info["sections"]
                               if s["name"] == "weights")

    def stored_model(self):
        """The reference on the values the artifact stores: each tensor
        decoded from its bytes, merged ones ("a+b+c@fmt") split back."""
        if self._stored is None:
            config = json.loads((self.case.ref / "config.json").read_text())
            w = dict(self.weights)
            for t in self.weight_tensors():
                parts = t["name"].split("@")[0].split("+")
                rows = [len(self.weights[p]) for p in parts]
                got = self.stored(t).reshape(sum(rows), -1)
                for p, piece in zip(parts, np.split(got, np.cumsum(rows)[:-1])):
                    w[p] = piece.reshape(self.weights[p].shape)
            arch = hf_reference.ARCHITECTURES[config["architectures"][0]]
            self._stored = arch(config, w)
        return self._stored

    def weight_tensors(self):
        """inspect's tensor entries that hold weights (not the graph's
        constants, such as Qwen3's per-head reshape targets)."""
        return [t for t in self.info["tensors"]
                if all(p in self.weights for p in t["name"].split("@")[0].split("+"))]

    def stored(self, t):
        """float64 values of inspect's tensor entry t, decoded from the
        artifact's bytes (test_quant_format.py's decoder for blocks)."""
        at = self.weights_at + t["offset"]
        raw = np.frombuffer(self.art.read_bytes()[at:at + t["bytes"]], np.uint8)
        if t["dtype"] in ("float32", "float16"):
            return raw.view("<f4" if t["dtype"] == "float32" else "<f2").astype(np.float64)
        if t["dtype"] == "bfloat16":
            return (raw.view("<u2").astype(np.uint32) << 16).view("<f4").astype(np.float64)
        n, k = t["shape"]
        return dequantize(t["dtype"], raw.reshape(n, -1), k, t["group_size"])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root, cache = tmp_path_factory.mktemp("gguf"), {}

    def get(name, type_name):
        if (name, type_name) not in cache:
            case = gguf_models.make_case(name, type_name, root)
            art = root / f"{name}-{type_name}.ingot"
            proc = ingot("compile", case.gguf, "-o", art, *COMPILE_FLAGS, timeout=300)
            assert proc.returncode == 0, describe(proc)
            cache[name, type_name] = Built(case, art, proc)
        return cache[name, type_name]
    return get


def requantise(fmt, a, group=32):
    return dequantize(fmt, quantize(fmt, a.astype(np.float32), group), a.shape[1], group)


def generate(art, *args):
    proc = ingot("generate", art, "--json", "--temperature", "0", *args, timeout=300)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)


def tolerance(type_name):
    return GGUF_RTOL.get(type_name, EXACT_RTOL)


def relative_error(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def last_logits(b, prompt, tmp_path):
    out = tmp_path / "logits.npy"
    generate(b.art, "--prompt-tokens", ",".join(map(str, prompt)),
             "--max-new-tokens", "1", "--logits-out", out)
    return np.load(out).astype(np.float64)


# -----------------------------------------------------------------------------
# Numerics
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, type_name", MODELS, ids=IDS)
def test_logits_match_reference(name, type_name, built, tmp_path):
    """Last-position logits of a 19-token prompt (longer than one prefill
    chunk of 8 and than the block size 4)."""
    b = built(name, type_name)
    vocab = b.ref.lm_head.shape[0]
    rng = np.random.default_rng([7, len(name), int(QT[type_name])])
    prompt = [int(t) for t in rng.integers(3, vocab, size=19)]
    actual, expected = last_logits(b, prompt, tmp_path), b.ref.logits(prompt)[-1]
    assert actual.shape == expected.shape
    err = relative_error(actual, expected)
    assert err < tolerance(type_name), f"{name}-{type_name}: relative error {err:.3g}"
    err = relative_error(actual, b.stored_model().logits(prompt)[-1])
    assert err < EXACT_RTOL, f"{name}-{type_name} vs stored values: {err:.3g}"


@pytest.mark.parametrize("name, type_name", MODELS, ids=IDS)
def test_greedy_tokens_match_reference(name, type_name, built):
    """24 greedy tokens through the paged KV cache, each the reference's
    argmax, or in its top 2 at a near tie (check_greedy). A converted type
    is held to the reference on the values it stores, and to the one on
    the GGUF's values where no two candidates are closer than twice its
    logits' tolerance (closer ones need only be in the top 2)."""
    b = built(name, type_name)
    prompt = [5, 17, 42, 9, 77, 31, 8, 12, 64, 3, 21]
    out = generate(b.art, "--prompt-tokens", ",".join(map(str, prompt)),
                   "--max-new-tokens", "24")
    assert out["prompt_tokens"] == prompt
    assert len(out["tokens"]) == 24 or out["finish_reason"] == "stop", out
    if type_name not in GGUF_RTOL:
        check_greedy(b.ref, prompt, out["tokens"])
        return
    check_greedy(b.stored_model(), prompt, out["tokens"])
    scale = np.abs(b.ref.logits(prompt)[-1]).max()
    check_greedy(b.ref, prompt, out["tokens"], top2_gap=2 * GGUF_RTOL[type_name] * scale)


# -----------------------------------------------------------------------------
# What the artifact stores
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, type_name", MODELS, ids=IDS)
def test_inspect_shows_the_kept_format(name, type_name, built):
    """Every 2-D tensor (embedding, merged Q/K/V and gate/up, o, down,
    lm_head) is in the type's format; norms and biases stay float32."""
    b = built(name, type_name)
    fmt, group = FORMAT.get(type_name, (None, None))
    names = set()
    for t in b.weight_tensors():
        names.add(t["name"])
        if len(t["shape"]) == 1:
            assert t["dtype"] == "float32", t
        elif fmt is None:
            assert t["dtype"] == FLOAT_DTYPES[type_name] and "@" not in t["name"], t
        else:
            assert t["dtype"] == fmt and t["name"].endswith(f"@{fmt}g{group}"), t
            assert t["group_size"] == group, t
    embed = "model.embed_tokens.weight" + (f"@{fmt}g{group}" if fmt else "")
    assert embed in names, sorted(names)
    # Tied: the one embedding table serves the gather and the lm_head.
    assert any(n.startswith("lm_head.weight") for n in names) == (name != "llama_tied")


@pytest.mark.parametrize("name, type_name", MODELS, ids=IDS)
def test_stored_values_are_the_gguf_values(name, type_name, built):
    """Decoded from the artifact, every tensor (merged parts concatenated
    along dim 0, as the name "a+b+c@fmt" says) holds the GGUF's values in HF
    row order exactly (Q5_0 too), within the f16 rounding of its group
    scales for Q6_K/Q4_K (a wrong code is off by a whole step, 1/15 of the
    group's range and more), or exactly their q8 g32 requantisation for
    Q5_1/Q5_K: the importer's un-permutation and block handling, value for
    value."""
    b = built(name, type_name)
    for t in b.weight_tensors():
        parts = t["name"].split("@")[0].split("+")
        want = np.concatenate([b.weights[p] for p in parts])
        if type_name in REQUANTISED and want.ndim == 2:
            want = requantise("q8", want)
        got = b.stored(t).reshape(want.shape)
        if type_name in ROUNDED_SCALES and want.ndim == 2:
            bound = 2.0 ** -9 * np.abs(want).max(axis=1, keepdims=True)
            worst = (np.abs(got - want) / bound).max()
            assert worst <= 1, f"{t['name']}: off by {worst:.3g}x the f16 bound"
            continue
        # f32 casts: the decoders agree up to rounding their d * q + m once.
        bad = np.argwhere(got.astype(np.float32) != want.astype(np.float32))
        assert bad.size == 0, (f"{t['name']}: {len(bad)} values differ, first at "
                               f"{bad[0].tolist()}: {got[tuple(bad[0])]} vs "
                               f"{want[tuple(bad[0])]}")


def test_q4_0_artifact_is_smaller_than_f32(built):
    """4.5 bits per weight instead of 32 (norms and manifest aside)."""
    q4 = built("llama", "Q4_0").art.stat().st_size
    f32 = built("llama", "F32").art.stat().st_size
    assert q4 < 0.25 * f32, (q4, f32)


@pytest.mark.parametrize("type_name", CONVERTED)
def test_converted_types_say_so(type_name, built):
    b = built("llama_k" if type_name in KQUANTS else "llama", type_name)
    fmt, group = FORMAT[type_name]
    how = "requantised to" if type_name in REQUANTISED else "repacked into"
    note = [line for line in b.compile.stderr.splitlines() if line.startswith("note:")]
    assert any(f"type {type_name} " in line and f"{how} {fmt} g{group}" in line
               and str(b.case.gguf) in line for line in note), b.compile.stderr


@pytest.mark.parametrize("type_name", EXACT)
def test_exact_types_have_no_note(type_name, built):
    assert "note:" not in built("llama", type_name).compile.stderr


# -----------------------------------------------------------------------------
# Tokenizer
# -----------------------------------------------------------------------------

TEXTS = ["The capital of France is Paris.",
         "In 1789, 3.14159 and 1000000 appear.",
         "Café, naïve, über — 東京 🙂 Ω≈ç",
         "  two spaces\n\ttab, then\r\nCRLF  ",
         "<|im_start|>user\nHello there!<|im_end|>\n<|im_start|>assistant\n",
         "call<tool_call>{\"x\": 42}<tool_call>"]


@pytest.mark.parametrize("name, type_name", [("llama", "F32"), ("qwen2", "Q8_0")])
def test_tokenizer_matches_tokenizer_json(name, type_name, built, tmp_path):
    """smollm (digits one by one, then GPT-2's split) and qwen2 (NFC,
    Qwen2's split); the chat markers are control tokens and encode whole,
    as does qwen2's user-defined <tool_call> (smollm has none: bytes)."""
    b = built(name, type_name)
    hf = b.case.tokenizer

    def hf_ids(text):
        return hf.encode(text, add_special_tokens=False).ids
    for i, text in enumerate(TEXTS):
        want = hf_ids(text)
        f = tmp_path / f"text{i}.txt"
        f.write_text(text, encoding="utf-8", newline="")
        proc = ingot("tokenize", b.art, "--text-file", f, "--json")
        assert proc.returncode == 0, describe(proc)
        assert json.loads(proc.stdout)["ids"] == want, text
        proc = ingot("tokenize", b.art, "--decode", ",".join(map(str, want)), "--json")
        assert proc.returncode == 0, describe(proc)
        assert json.loads(proc.stdout)["text"] == hf.decode(want, skip_special_tokens=False), text
    assert hf_ids(TEXTS[-2])[0] == hf.token_to_id("<|im_start|>")
    assert (hf.token_to_id("<tool_call>") in hf_ids(TEXTS[-1])) == (name == "qwen2")


# -----------------------------------------------------------------------------
# Gemma 2/3 and Phi-3 GGUFs: the tiny HF models written as llama.cpp would
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["gemma2", "gemma3", "phi3"])
def test_gguf_of_a_directory_computes_the_same_model(name, tmp_path):
    """The GGUF's names, norm offsets (+1 for Gemma), fused Phi-3 tensors
    and `<arch>.*` keys map back to the same graph: logits within the f32
    bound (EXACT_RTOL) of the float64 reference of the directory."""
    import hf_models
    import hf_to_gguf
    model = hf_models.make_model(name, tmp_path)
    config = json.loads((model / "config.json").read_text())
    if "query_pre_attn_scalar" in config:
        # GGUF has no key for it: llama.cpp takes head_dim (hidden / heads
        # for the 27B models), so the directory must agree to compare.
        config["query_pre_attn_scalar"] = config["head_dim"]
        (model / "config.json").write_text(json.dumps(config))
    gguf = hf_to_gguf.convert(model, tmp_path / f"{name}.gguf",
                              hf_models.CASES[name]["style"])
    art = tmp_path / f"{name}.ingot"
    proc = ingot("compile", gguf, "-o", art, *COMPILE_FLAGS)
    assert proc.returncode == 0, describe(proc)
    prompt = [5, 17, 42, 9, 77, 31, 8, 12, 64, 3, 21, 6, 19]
    out = tmp_path / "logits.npy"
    generate(art, "--prompt-tokens", ",".join(map(str, prompt)),
             "--max-new-tokens", "1", "--logits-out", out)
    expected = hf_reference.load(model).logits(prompt)[-1]
    err = relative_error(np.load(out).astype(np.float64), expected)
    assert err < EXACT_RTOL, f"{name}: relative error {err:.3g}"
