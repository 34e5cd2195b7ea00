"""com.microsoft MatMulNBits against onnxruntime: B packed 4 or 8 bits
wide in blocks along K (the last block ragged), a float scale per block,
zero points packed the same way or absent (2^(bits-1)) and an optional
bias, packed here as onnxruntime's quantiser packs them (its own
quantiser needs onnx_ir, which the test venv does not carry). ingot
dequantises B at compile time and multiplies in f32, as onnxruntime does
at accuracy_level 0; sums of K = 80 products in another order, so 1e-5 of
the largest output.
"""
import numpy as np
import pytest
from onnx import helper

from ingot_testlib import make_model
from test_ops_quant import F32, U8, rng_for, run_both

K, N, BLOCK = 80, 24, 32


def pack(values, bits):
    """Unsigned `bits`-wide values, low bits first, into bytes."""
    per = 8 // bits
    v = values.reshape(-1, per).astype(np.uint32)
    out = np.zeros(v.shape[0], np.uint32)
    for j in range(per):
        out |= v[:, j] << (j * bits)
    return out.astype(U8)


def assert_close(got, want):
    for name, w in want.items():
        g = got[name]
        assert g.shape == w.shape, (name, g.shape, w.shape)
        scale = float(np.abs(w).max())
        assert float(np.abs(g - w).max()) <= 1e-5 * scale, name


@pytest.mark.parametrize("bits,zero_points,bias",
                         [(4, True, True), (4, False, False),
                          (8, True, False)],
                         ids=["4bit_zp_bias", "4bit_default_zp",
                              "8bit_zp"])
def test_matmul_nbits(tmp_path, bits, zero_points, bias):
    r = rng_for(f"nbits{bits}{zero_points}{bias}")
    blocks = -(-K // BLOCK)
    q = r.integers(0, 2 ** bits, (N, blocks * BLOCK))
    inits = {"B": pack(q, bits).reshape(N, blocks, BLOCK * bits // 8),
             "scales": r.uniform(0.01, 0.1, N * blocks).astype(F32)}
    inputs = ["a", "B", "scales"]
    if zero_points:
        zp = r.integers(0, 2 ** bits, (N, blocks))
        per_row = -(-blocks * bits // 8)
        padded = np.zeros((N, per_row * 8 // bits), np.int64)
        padded[:, :blocks] = zp
        inits["zp"] = pack(padded, bits).reshape(-1)
        inputs.append("zp")
    if bias:
        inputs += ["", "", "bias"] if not zero_points else ["", "bias"]
        inits["bias"] = r.normal(0, 1, N).astype(F32)
    mm = helper.make_node("MatMulNBits", inputs, ["y"], domain="com.microsoft",
                          K=K, N=N, bits=bits, block_size=BLOCK)
    model = make_model([mm], [("a", F32, [3, 5, K])], ["y"], inits, opset=17,
                       check=False)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    a = r.normal(0, 1, (3, 5, K)).astype(F32)
    assert_close(*run_both(tmp_path, model, {"a": a}))

