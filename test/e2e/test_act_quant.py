"""`ingot compile --act-quant int8`: "q16" weights and int8 activations.

Tiny random GGUF models (test/fixtures/gguf_models.py) in Q8_0, Q4_0 and
Q4_1 blocks, and a tiny HF model quantised to int8 per output channel
(--quant int8 --group-size 0), are compiled with and without --act-quant
int8, and

  - every "q16" tensor holds exactly the row-major blocks of the plain
    artifact, permuted (q8 values + 128) as format/include/ingot/
    WeightLayout.h says (unpacked here in numpy);
  - the logits match the float64 reference (hf_reference.py) on the
    dequantised weights in which every linear's input is first
    quantised per 32 values to int8 the way runtime/src/cpu/LinearQ16.h
    says (d = amax / 127, round half to even): an independent model of
    the kernel's arithmetic;
  - a tied embedding is stored once;
  - the flag warns when nothing can use it and is refused with CUDA;
  - `--act-quant auto` gives an LLM compiled for the CPU alone int8
    activations, and one with a CUDA target f32 activations.
"""
import json
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import gguf_models  # noqa: E402
import hf_models  # noqa: E402
import hf_reference  # noqa: E402
from quant_testlib import Artifact as QuantArtifact  # noqa: E402
from quant_testlib import dequantised_reference  # noqa: E402

COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]
CASES = [("llama", "Q4_0"), ("llama", "Q4_1"), ("llama", "Q8_0"),
         ("llama_tied", "Q4_1")]
FORMATS = {"q8": 34, "q4": 18, "q4m": 20}  # bytes of a 32-value block

# ingot against the act-quant reference: both quantise the same linear
# inputs (ingot from f32 values, the reference from float64 ones; a value
# rounding the other way would be one step of one value), then sum exactly
# in integers and scale, so what is left is f32 rounding, as for an F32
# model (test_llm.py's bound 1e-4). Measured 1.4e-7 .. 2.3e-7, while the
# activation rounding itself moves these logits by 1.9e-2 .. 3.9e-2 and a
# wrong block scale, sum or nibble order by 1e-2 or more.
ACT_QUANT_RTOL = 1e-4


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root, cache = tmp_path_factory.mktemp("actq"), {}

    def get(name, type_name, *flags):
        key = (name, type_name) + flags
        if key not in cache:
            case = gguf_models.make_case(name, type_name, root)
            art = root / f"{name}-{type_name}-{len(cache)}.ingot"
            proc = ingot("compile", case.gguf, "-o", art, *COMPILE_FLAGS, *flags,
                         timeout=300)
            assert proc.returncode == 0, describe(proc)
            info = json.loads(ingot("inspect", art, "--json").stdout)
            cache[key] = (case, art, info)
        return cache[key]
    return get


def tensor_bytes(art, info, t):
    at = next(s["offset"] for s in info["sections"] if s["name"] == "weights")
    at += t["offset"]
    return np.frombuffer(art.read_bytes()[at:at + t["bytes"]], np.uint8)


def unpack_q16(fmt, raw, n, k, group=32):
    """Row-major blocks of a "q16" tensor (WeightLayout.h), [n, k/32, block]
    (group 32) or [n, 2 + k] (a q8 one per channel, group k)."""
    if group == k:
        assert fmt == "q8"
        panels = raw.reshape(n // 16, 16 * (2 + k))
        out = np.zeros((n // 16, 16, 2 + k), np.uint8)
        out[..., :2] = panels[:, :32].reshape(n // 16, 16, 2)
        # chunk c, byte 4r + j: value 4c + j of row r, + 128
        v = panels[:, 32:].reshape(n // 16, k // 4, 16, 4).transpose(0, 2, 1, 3)
        out[..., 2:] = v.reshape(n // 16, 16, k) ^ 0x80
        return out.reshape(n, 2 + k)
    hdr = 4 if fmt == "q4m" else 2
    block = FORMATS[fmt]
    blocks = k // 32
    panels = raw.reshape(n // 16, blocks, 16 * block)
    out = np.zeros((n // 16, 16, blocks, block), np.uint8)
    out[..., 0:2] = panels[..., 0:32].reshape(n // 16, blocks, 16, 2).transpose(0, 2, 1, 3)
    if fmt == "q4m":
        out[..., 2:4] = panels[..., 32:64].reshape(n // 16, blocks, 16, 2).transpose(0, 2, 1, 3)
    payload = panels[..., 16 * hdr:]
    if fmt == "q8":
        # chunk c, byte 4r + j: value 4c + j of row r
        v = payload.reshape(n // 16, blocks, 8, 16, 4).transpose(0, 3, 1, 2, 4)
        out[..., hdr:] = v.reshape(n // 16, 16, blocks, 32) ^ 0x80
    else:
        c = payload.reshape(n // 16, blocks, 4, 16, 4).transpose(0, 3, 1, 2, 4)
        lo, hi = c & 15, c >> 4           # values 8c + j and 8c + 4 + j
        values = np.concatenate([lo, hi], axis=-1).reshape(n // 16, 16, blocks, 32)
        out[..., hdr:] = values[..., :16] | (values[..., 16:] << 4)
    return out.reshape(n, blocks * block)


def check_repacked(plain_art, plain, art, info):
    plain_by_name = {t["name"]: t for t in plain["tensors"]}
    packed = [t for t in info["tensors"] if t.get("layout") == "q16"]
    assert packed, "no tensor was packed"
    for t in packed:
        base = plain_by_name[t["name"].removesuffix("@q16")]
        assert t["dtype"] == base["dtype"] and t["bytes"] == base["bytes"]
        n, k = t["shape"]
        got = unpack_q16(t["dtype"], tensor_bytes(art, info, t), n, k, t["group_size"])
        want = tensor_bytes(plain_art, plain, base).reshape(n, -1)
        np.testing.assert_array_equal(got, want, err_msg=t["name"])
    return packed


@pytest.mark.parametrize("name,type_name", CASES)
def test_q16_tensors_are_the_plain_blocks_repacked(name, type_name, built):
    _, plain_art, plain = built(name, type_name, "--act-quant", "none")
    _, art, info = built(name, type_name, "--act-quant", "int8")
    check_repacked(plain_art, plain, art, info)


def quantise_rows(x):
    """x rounded as the q16 kernels quantise it: per 32 values, int8."""
    t = x.reshape(*x.shape[:-1], -1, 32)
    amax = np.abs(t).max(axis=-1, keepdims=True)
    scale = np.where(amax > 0, 127.0 / np.where(amax > 0, amax, 1), 0.0)
    q = np.clip(np.rint(t * scale), -127, 127)
    return (q * (amax / 127.0)).reshape(x.shape)


def act_quant_reference(ref, info):
    """The float64 model `ref` with its q16 linears seeing their inputs
    quantised."""
    packed = {p for t in info["tensors"] if t.get("layout") == "q16"
              for p in t["name"].split("@")[0].split("+")}
    plain_linear = ref._linear

    def linear(x, name):
        if name + ".weight" in packed:
            x = quantise_rows(x)
        return plain_linear(x, name)
    ref._linear = linear
    head_packed = any(p in packed for p in ("lm_head.weight", "model.embed_tokens.weight"))
    if head_packed:
        norm = ref.w["model.norm.weight"]
        ref.head = lambda h: quantise_rows(
            hf_reference.rms_norm(h, norm, ref.eps)) @ ref.lm_head.T
    return ref


def expect_act_quant_logits(label, art, info, load_ref, seed, tmp_path):
    """ingot's logits for a random prompt against act_quant_reference on
    the float64 model load_ref() gives (loaded twice: the reference patches
    it)."""
    rng = np.random.default_rng(seed)
    vocab = info["outputs"][0]["shape"][-1]
    prompt = [int(t) for t in rng.integers(3, vocab, size=13)]
    out = tmp_path / "logits.npy"
    proc = ingot("generate", art, "--prompt-tokens", ",".join(map(str, prompt)),
                 "--max-new-tokens", "1", "--temperature", "0", "--logits-out", out,
                 timeout=300)
    assert proc.returncode == 0, describe(proc)
    actual = np.load(out).astype(np.float64)
    want = act_quant_reference(load_ref(), info).logits(prompt)[-1]
    plain = load_ref().logits(prompt)[-1]
    err = float(np.linalg.norm(actual - want) / np.linalg.norm(want))
    moved = float(np.linalg.norm(want - plain) / np.linalg.norm(plain))
    print(f"{label}: vs act-quant reference {err:.3g}; "
          f"activation rounding moves the reference by {moved:.3g}")
    assert err < ACT_QUANT_RTOL
    assert moved > 10 * err, "the reference did not model the rounding"


@pytest.mark.parametrize("name,type_name", CASES)
def test_logits_match_the_act_quant_reference(name, type_name, built, tmp_path):
    case, art, info = built(name, type_name, "--act-quant", "int8")
    expect_act_quant_logits(f"{name} {type_name}", art, info,
                            lambda: hf_reference.load(case.ref),
                            len(name) * 7 + len(type_name), tmp_path)


@pytest.fixture(scope="module")
def per_channel(tmp_path_factory):
    """A tiny HF llama in int8 per output channel, without and with int8
    activations: (model dir, {mode: (artifact, inspect json)})."""
    root = tmp_path_factory.mktemp("actq_channel")
    model = hf_models.make_model("llama", root)
    arts = {}
    for mode in ("none", "int8"):
        art = root / f"channel-{mode}.ingot"
        proc = ingot("compile", model, "-o", art, *COMPILE_FLAGS, "--quant", "int8",
                     "--group-size", "0", "--act-quant", mode, timeout=300)
        assert proc.returncode == 0, describe(proc)
        assert "--act-quant" not in proc.stderr, describe(proc)
        arts[mode] = (art, json.loads(ingot("inspect", art, "--json").stdout))
    return model, arts


def test_per_channel_q16_tensors_are_the_plain_rows_repacked(per_channel):
    _, arts = per_channel
    packed = check_repacked(*arts["none"], *arts["int8"])
    assert {t["group_size"] for t in packed} == {64, 128}  # K of each linear
    assert all(t["dtype"] == "q8" for t in packed)


def test_per_channel_logits_match_the_act_quant_reference(per_channel, tmp_path):
    """x in blocks of 32, the weight's one scale a row applied last: the
    same reference as the GGUF cases, on the per-channel weights the plain
    artifact stores."""
    model, arts = per_channel
    (plain_art, _), (art, info) = arts["none"], arts["int8"]
    expect_act_quant_logits(
        "per channel", art, info,
        lambda: dequantised_reference(model, QuantArtifact(plain_art)), 17, tmp_path)


def test_tied_embedding_is_stored_once(built):
    """The tied table is read by the gather and, as lm_head, by a linear:
    one tensor either way (packed as "q16" when its rows make whole panels;
    this fixture's 412-token vocabulary does not, so the lm_head keeps the
    weight-only kernel: LinearQ16Test and pack_weights_q16.mlir cover the
    packed case)."""
    _, _, info = built("llama_tied", "Q4_1", "--act-quant", "int8")
    embed = [t for t in info["tensors"] if "embed_tokens" in t["name"]]
    assert len(embed) == 1, embed
    rows = embed[0]["shape"][0]
    assert embed[0]["layout"] == ("q16" if rows % 16 == 0 else "row-major")


def test_float_weights_warn_and_cuda_is_refused(tmp_path):
    model = hf_models.make_model("llama", tmp_path)
    proc = ingot("compile", model, "-o", tmp_path / "f.ingot", *COMPILE_FLAGS,
                 "--act-quant", "int8", timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert "--act-quant int8 found no linear to change" in proc.stderr
    proc = ingot("compile", model, "-o", tmp_path / "c.ingot", *COMPILE_FLAGS,
                 "--quant", "int4", "--act-quant", "int8", "--target", "cpu,cuda:sm_90",
                 timeout=300)
    assert proc.returncode == 1
    assert "--act-quant int8 is for the CPU target only" in proc.stderr
    assert not (tmp_path / "c.ingot").exists()


def test_auto_is_int8_for_the_cpu_alone(built, tmp_path):
    """--act-quant auto compiles a GGUF for the CPU as --act-quant int8
    does, byte for byte; with a CUDA target it is none, without a warning;
    an f32 model has nothing to change and gets no warning either."""
    case, explicit_art, _ = built("llama", "Q4_1", "--act-quant", "int8")
    art = tmp_path / "auto.ingot"
    proc = ingot("compile", case.gguf, "-o", art, *COMPILE_FLAGS, "--act-quant", "auto",
                 timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert art.read_bytes() == explicit_art.read_bytes()

    cuda = tmp_path / "cuda.ingot"
    proc = ingot("compile", case.gguf, "-o", cuda, *COMPILE_FLAGS, "--act-quant", "auto",
                 "--target", "cpu,cuda:sm_90", timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert "--act-quant" not in proc.stderr
    info = json.loads(ingot("inspect", cuda, "--json").stdout)
    assert not [t for t in info["tensors"] if t["layout"] == "q16"]

    model = hf_models.make_model("llama", tmp_path)
    proc = ingot("compile", model, "-o", tmp_path / "f.ingot", *COMPILE_FLAGS,
                 "--act-quant", "auto", timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert "--act-quant" not in proc.stderr
