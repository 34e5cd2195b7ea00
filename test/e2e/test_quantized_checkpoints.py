"""GPTQ, AWQ and FP8 directories (test/fixtures/quantized_checkpoints.py
builds them from known codes, zero points and scales, packed as their
writers pack them) against the float64 reference on the values they stand
for.

Tolerances (max |a - b| / max |b| of the last position's logits):
  - symmetric GPTQ (q4 / q8 g32, codes and scales copied): only f32
    rounding is left, as for any f32 model: 1e-4 (test_llm.py's bound);
  - asymmetric GPTQ and AWQ (q4m g32): the minimum -scale·zero is rounded
    to f16, moving a weight by up to 2^-11 of its group's minimum; measured
    1.2e-3 on this model, bound 5e-3;
  - desc_act GPTQ (features regrouped by g_idx, requantised to q8 g32):
    each weight moves by up to half a q8 step; measured 2.1e-2, bound 0.06;
  - FP8 (f8e4m3, e4m3 bytes as stored): each scale is rounded to f16,
    moving all values of its group by up to 2^-11 relative; measured
    1.7e-4 (per tensor), 8.4e-4 (per row), 9.4e-4 (32 x 32 blocks), bound
    5e-3.
A wrong nibble order, zero offset or transposition moves the logits by
O(1), far outside every bound.
"""
import json
import shutil
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, assert_clean_failure, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_reference  # noqa: E402
import quantized_checkpoints as qc  # noqa: E402

# case: (kept format, note text, bound, group: None = a whole row, K)
FP8_NOTE = "e4m3 values as stored, scales rounded to f16"
EXPECT = {"gptq_sym4": ("q4", "kept as q4 g32 (codes and scales as stored)", 1e-4, 32),
          "gptq_sym8": ("q8", "kept as q8 g32 (codes and scales as stored)", 1e-4, 32),
          "gptq_asym4": ("q4m", "the minimum -scale·zero rounded to f16", 5e-3, 32),
          "awq4": ("q4m", "the minimum -scale·zero rounded to f16", 5e-3, 32),
          "gptq_desc_act": ("q8", "requantised to q8 g32", 0.06, 32),
          "fp8_tensor": ("f8e4m3", FP8_NOTE, 5e-3, None),
          "fp8_channel": ("f8e4m3", FP8_NOTE, 5e-3, None),
          "fp8_block": ("f8e4m3", FP8_NOTE, 5e-3, qc.FP8_BLOCK)}
PROMPT = [5, 9, 14, 3, 22, 7, 8, 1, 2, 33, 44, 61, 17]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root, cache = tmp_path_factory.mktemp("qckpt"), {}

    def get(name):
        if name not in cache:
            case = qc.make_case(name, root)
            art = root / f"{name}.ingot"
            proc = ingot("compile", case.model, "-o", art)
            assert proc.returncode == 0, describe(proc)
            cache[name] = (case, art, proc)
        return cache[name]
    return get


@pytest.mark.parametrize("name", list(EXPECT))
def test_logits_match_the_checkpoint_values(name, built, tmp_path):
    case, art, _ = built(name)
    out = tmp_path / "logits.npy"
    proc = ingot("generate", art, "--prompt-tokens", ",".join(map(str, PROMPT)),
                 "--max-new-tokens", "1", "--logits-out", out, "--temperature", "0")
    assert proc.returncode == 0, describe(proc)
    actual = np.load(out).astype(np.float64)
    expected = hf_reference.load(case.ref).logits(PROMPT)[-1]
    err = float(np.abs(actual - expected).max() / np.abs(expected).max())
    assert err < EXPECT[name][2], f"{name}: relative error {err:.3g}"


@pytest.mark.parametrize("name", list(EXPECT))
def test_weights_are_kept_in_their_format_and_said_so(name, built):
    case, art, proc = built(name)
    fmt, note, _, group = EXPECT[name]
    assert any(line.startswith("note:") and note in line and str(case.model) in line
               for line in proc.stderr.splitlines()), proc.stderr
    info = json.loads(ingot("inspect", art, "--json").stdout)
    linears = [t for t in info["tensors"] if "proj" in t["name"]]
    assert linears and all(t["dtype"] == fmt and
                           t["group_size"] == (group or t["shape"][1])
                           for t in linears), linears
    # The embedding and lm_head were never packed: they stay float32.
    plain = [t for t in info["tensors"] if t["name"] in ("model.embed_tokens.weight",
                                                         "lm_head.weight")]
    assert len(plain) == 2 and all(t["dtype"] == "float32" for t in plain), plain


def test_quant_flag_requantises_instead(built, tmp_path):
    """--quant int8 ignores the stored formats: every linear, lm_head too,
    becomes q8 from the checkpoint's values."""
    case, _, _ = built("gptq_sym4")
    art = tmp_path / "int8.ingot"
    proc = ingot("compile", case.model, "-o", art, "--quant", "int8")
    assert proc.returncode == 0, describe(proc)
    info = json.loads(ingot("inspect", art, "--json").stdout)
    assert all(t["dtype"] == "q8" for t in info["tensors"] if "proj" in t["name"])


def edited(built, tmp_path, change):
    case, _, _ = built("gptq_sym4")
    model = shutil.copytree(case.model, tmp_path / "m")
    config = json.loads((model / "config.json").read_text())
    change(config["quantization_config"])
    (model / "config.json").write_text(json.dumps(config))
    return model


@pytest.mark.parametrize("key, value, words", [
    ("quant_method", "bitsandbytes", ["'bitsandbytes'", "supported: gptq, awq, fp8"]),
    ("bits", 3, ["bits", "3"]),
    ("checkpoint_format", "marlin", ["checkpoint_format", "marlin"]),
    ("group_size", 64, ["group_size 64", "do not agree"]),
])
def test_unsupported_or_inconsistent_settings_are_refused(key, value, words, built,
                                                          tmp_path):
    model = edited(built, tmp_path, lambda q: q.update({key: value}))
    proc = ingot("compile", model, "-o", tmp_path / "out.ingot")
    assert_clean_failure(proc)
    for w in words:
        assert w in proc.stderr, describe(proc)
    assert not (tmp_path / "out.ingot").exists()


def test_fp8_blocks_without_a_block_size_are_refused(built, tmp_path):
    case, _, _ = built("fp8_block")
    model = shutil.copytree(case.model, tmp_path / "m")
    config = json.loads((model / "config.json").read_text())
    del config["quantization_config"]["weight_block_size"]
    (model / "config.json").write_text(json.dumps(config))
    proc = ingot("compile", model, "-o", tmp_path / "out.ingot")
    assert_clean_failure(proc)
    assert "weight_scale_inv" in proc.stderr and "weight_block_size" in proc.stderr, \
        describe(proc)
