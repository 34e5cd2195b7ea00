"""Linear quantisation ops against onnxruntime: QuantizeLinear,
DequantizeLinear, DynamicQuantizeLinear, MatMulInteger and QLinearMatMul, per tensor and
per axis and in blocks, uint8 and int8, and a MatMul quantised by onnxruntime's own
quantize_dynamic. Integer outputs must be bit-exact (both sides round half
to even and compute the int32 product exactly: onnxruntime runs each model's
exact twin, see exact_twin); float outputs come from the same one or two
f32 roundings, so 1e-6 relative to the largest value.
"""
import zlib

import numpy as np
import onnx
import pytest
from ingot_testlib import (compile_model, kernels_of, make_model, node,
                           ort_run, run_model, save_model)
from ops_case_lib import compile_error

U8, I8, I32, F32 = np.uint8, np.int8, np.int32, np.float32


# Integer products onnxruntime computes from an int8 weight: (op, weight
# input, its zero point input).
INT8_WEIGHTS = {"MatMulInteger": (1, 3), "QLinearMatMul": (3, 5),
                "QLinearConv": (3, 5), "QGemm": (3, 5)}


def exact_twin(model):
    """The model with every int8 weight of an integer product given as
    uint8 w + 128 with zero point zp + 128: (w' - zp') = (w - zp), so it is
    the same function. onnxruntime's uint8 x int8 kernel on x86 without
    VNNI adds pairs of products in 16 bits with saturation (VPMADDUBSW)
    and so is not exact there; its uint8 x uint8 kernel is, which makes the
    twin an exact reference on every machine. The shifted copies are new
    initializers, so other readers of the originals are unaffected."""
    twin = onnx.shape_inference.infer_shapes(model)
    graph = twin.graph
    inits = {t.name: t for t in graph.initializer}
    elem_types = {v.name: v.type.tensor_type.elem_type
                  for v in [*graph.input, *graph.value_info, *graph.output]}
    for i, n in enumerate(graph.node):
        if n.op_type not in INT8_WEIGHTS:
            continue
        w_at, zp_at = INT8_WEIGHTS[n.op_type]
        w = inits.get(n.input[w_at])
        # The activation's type: that of its zero point (input 2) when
        # given, as contrib ops' outputs have no inferred type.
        x_zp = inits.get(n.input[2]) if len(n.input) > 2 else None
        x_type = x_zp.data_type if x_zp else elem_types.get(n.input[0])
        if (w is None or w.data_type != onnx.TensorProto.INT8 or
                x_type != onnx.TensorProto.UINT8):
            continue  # only uint8 x int8 products saturate
        has_zp = len(n.input) > zp_at and n.input[zp_at]
        zp = (onnx.numpy_helper.to_array(inits[n.input[zp_at]]) if has_zp
              else np.zeros((), I8))
        for name, values in ((f"twin{i}_w", onnx.numpy_helper.to_array(w)),
                             (f"twin{i}_zp", zp)):
            graph.initializer.append(onnx.numpy_helper.from_array(
                (values.astype(np.int16) + 128).astype(U8), name))
        n.input[w_at] = f"twin{i}_w"
        while len(n.input) <= zp_at:
            n.input.append("")
        n.input[zp_at] = f"twin{i}_zp"
    return twin


def run_both(tmp_path, model, feed):
    """ingot on the model, onnxruntime on its exact twin."""
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    return run_model(artifact, feed, tmp_path), ort_run(exact_twin(model),
                                                        feed)


def assert_same(got, want):
    assert sorted(got) == sorted(want)
    for name, w in want.items():
        g = got[name]
        assert g.dtype == w.dtype and g.shape == w.shape, (name, g, w)
        if w.dtype.kind == "f":
            scale = max(float(np.abs(w).max()), 1e-30)
            assert float(np.abs(g - w).max()) / scale <= 1e-6, name
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)


def rng_for(tag):
    return np.random.default_rng(zlib.crc32(tag.encode()))


@pytest.mark.parametrize("dtype", [U8, I8], ids=["uint8", "int8"])
def test_dequantize_per_tensor_and_per_axis(tmp_path, dtype):
    r = rng_for("dq" + np.dtype(dtype).name)
    info = np.iinfo(dtype)
    x = r.integers(info.min, info.max, (3, 4, 5), dtype=dtype, endpoint=True)
    zp = np.array(r.integers(info.min, info.max), dtype=dtype)
    zp_axis = r.integers(info.min, info.max, (4,), dtype=dtype)
    scale_axis = r.uniform(0.01, 0.2, (4,)).astype(F32)
    model = make_model(
        [node("DequantizeLinear", ["x", "s", "zp"], ["per_tensor"]),
         node("DequantizeLinear", ["x", "sa", "zpa"], ["per_axis"], axis=1),
         node("DequantizeLinear", ["x", "s"], ["no_zp"])],
        [("x", dtype, [3, 4, 5])], ["per_tensor", "per_axis", "no_zp"],
        {"s": np.array(0.037, F32), "zp": zp, "sa": scale_axis,
         "zpa": zp_axis})
    assert_same(*run_both(tmp_path, model, {"x": x}))


def test_dequantize_int32_bias(tmp_path):
    """The int32 form quantisers write for biases (zero point 0)."""
    x = rng_for("dq32").integers(-2**20, 2**20, (64,), dtype=I32)
    model = make_model([node("DequantizeLinear", ["x", "s"], ["y"])],
                       [("x", I32, [64])], ["y"],
                       {"s": np.array(3.1e-4, F32)})
    assert_same(*run_both(tmp_path, model, {"x": x}))


@pytest.mark.parametrize("dtype", [U8, I8], ids=["uint8", "int8"])
def test_quantize_rounds_half_to_even_and_saturates(tmp_path, dtype):
    r = rng_for("q" + np.dtype(dtype).name)
    scale = np.float32(0.25)
    x = r.uniform(-40, 40, (6, 8)).astype(F32)
    # Exact ties (k + 0.5) * scale, and values far outside the range.
    x[0] = (np.arange(-4, 4) + 0.5) * scale
    x[1, :4] = [1e4, -1e4, 300.0, -300.0]
    zp = np.array(3 if dtype == U8 else -2, dtype)
    scales = r.uniform(0.05, 0.5, (8,)).astype(F32)
    zps = r.integers(0, 9, (8,)).astype(dtype)
    model = make_model(
        [node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
         node("QuantizeLinear", ["x", "sa", "zpa"], ["qa"], axis=1),
         node("QuantizeLinear", ["x", "s"], ["q_default"])],
        [("x", F32, [6, 8])], ["q", "qa", "q_default"],
        {"s": np.array(scale), "zp": zp, "sa": scales, "zpa": zps})
    assert_same(*run_both(tmp_path, model, {"x": x}))


@pytest.mark.parametrize("lo,hi", [(-3.0, 5.0), (0.5, 2.0), (-4.0, -1.0)],
                         ids=["mixed", "positive", "negative"])
def test_dynamic_quantize_linear(tmp_path, lo, hi):
    """Positive-only and negative-only inputs: the range still includes 0."""
    x = rng_for(f"dql{lo}").uniform(lo, hi, (5, 33)).astype(F32)
    model = make_model(
        [node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zp"])],
        [("x", F32, [5, 33])], ["y", "scale", "zp"])
    assert_same(*run_both(tmp_path, model, {"x": x}))


def test_dynamic_quantize_linear_ties_and_zeros(tmp_path):
    """Range [-255, 0] makes the scale exactly 1, so x.5 values are ties
    that round to even, in the vector body and the tail; an all-zero
    tensor gets scale 1 and zero point 0."""
    ties = -np.arange(0.5, 160.5, 1.0)
    x = np.concatenate([[-255.0, 0.0], ties]).astype(F32).reshape(2, 81)
    model = make_model(
        [node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zp"])],
        [("x", F32, [2, 81])], ["y", "scale", "zp"])
    assert_same(*run_both(tmp_path, model, {"x": x}))
    zeros = np.zeros((2, 81), F32)
    assert_same(*run_both(tmp_path, model, {"x": zeros}))


def test_dynamic_quantize_linear_across_chunks(tmp_path):
    """A range taken in parallel over chunks of 16384 values: the minimum
    in the last, ragged chunk and the maximum in the second."""
    x = rng_for("dqlchunks").uniform(-1, 1, (3 * 16384 + 77,)).astype(F32)
    x[16384 + 5], x[-3] = 7.5, -3.25
    model = make_model(
        [node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zp"])],
        [("x", F32, [x.size])], ["y", "scale", "zp"])
    got, want = run_both(tmp_path, model, {"x": x})
    assert_same(got, want)
    assert np.isclose(want["scale"], (7.5 + 3.25) / 255)


@pytest.mark.parametrize("a_type,b_type,per_column",
                         [(U8, I8, False), (U8, U8, True), (I8, I8, False)],
                         ids=["u8s8", "u8u8_per_column", "s8s8"])
def test_matmul_integer(tmp_path, a_type, b_type, per_column):
    """Odd K, N not a multiple of the 16-column panel, M not of 4 rows."""
    r = rng_for(f"mmi{a_type}{b_type}{per_column}")
    ai, bi = np.iinfo(a_type), np.iinfo(b_type)
    a = r.integers(ai.min, ai.max, (2, 7, 37), dtype=a_type, endpoint=True)
    b = r.integers(bi.min, bi.max, (37, 19), dtype=b_type, endpoint=True)
    azp = np.array(r.integers(ai.min, ai.max), a_type)
    bzp = (r.integers(bi.min, bi.max, (19,), dtype=b_type) if per_column
           else np.array(r.integers(bi.min, bi.max), b_type))
    model = make_model(
        [node("MatMulInteger", ["a", "b", "azp", "bzp"], ["y"]),
         node("MatMulInteger", ["a", "b"], ["y_no_zp"])],
        [("a", a_type, [2, 7, 37])], ["y", "y_no_zp"],
        {"b": b, "azp": azp, "bzp": bzp})
    assert_same(*run_both(tmp_path, model, {"a": a}))


def test_matmul_quantized_by_onnxruntime(tmp_path):
    """A two-layer MLP through onnxruntime's quantize_dynamic (per-channel
    int8 weights): DynamicQuantizeLinear, MatMulInteger, Cast and Mul as
    the quantiser writes them."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    r = rng_for("qdyn")
    w1 = r.normal(0, 0.1, (64, 96)).astype(F32)
    w2 = r.normal(0, 0.1, (96, 40)).astype(F32)
    fp32 = make_model(
        [node("MatMul", ["x", "w1"], ["h"]), node("Relu", ["h"], ["hr"]),
         node("MatMul", ["hr", "w2"], ["y"])],
        [("x", F32, ["n", 64])], ["y"], {"w1": w1, "w2": w2}, opset=13)
    save_model(fp32, tmp_path / "fp32.onnx")
    quantize_dynamic(str(tmp_path / "fp32.onnx"), str(tmp_path / "q.onnx"),
                     weight_type=QuantType.QInt8, per_channel=True)
    q = onnx.load(str(tmp_path / "q.onnx"))
    ops = {n.op_type for n in q.graph.node}
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= ops, ops
    x = r.normal(0, 1, (9, 64)).astype(F32)
    got, want = run_both(tmp_path, q, {"x": x})
    assert_same(got, want)


def test_matmul_integer_with_gelu_epilogue(tmp_path):
    """quantize_dynamic's MatMul + bias, then the erf GELU as PyTorch
    exports it (BERT's intermediate layer): the scale, bias and GELU run
    in the int8 product's tiles. 1, 13 and 64 rows end the 6-row tiles
    raggedly (1 and 4 rows) and 100 columns the 64-column panels. GELU
    itself differs from onnxruntime's Erf by a few ulp per value, far
    inside the 1e-6 of the largest value assert_same allows."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    r = rng_for("qgelu")
    consts = {"w": r.normal(0, 0.1, (72, 100)).astype(F32),
              "b": r.normal(0, 0.5, (100,)).astype(F32),
              "sqrt2": np.array(np.sqrt(2), F32), "one": np.array(1, F32),
              "half": np.array(0.5, F32)}
    fp32 = make_model(
        [node("MatMul", ["x", "w"], ["m"]), node("Add", ["m", "b"], ["h"]),
         node("Div", ["h", "sqrt2"], ["d"]), node("Erf", ["d"], ["e"]),
         node("Add", ["e", "one"], ["a"]), node("Mul", ["h", "a"], ["p"]),
         node("Mul", ["p", "half"], ["y"])],
        [("x", F32, ["n", 72])], ["y"], consts, opset=13)
    save_model(fp32, tmp_path / "fp32.onnx")
    quantize_dynamic(str(tmp_path / "fp32.onnx"), str(tmp_path / "q.onnx"),
                     weight_type=QuantType.QInt8, per_channel=True)
    q = onnx.load(str(tmp_path / "q.onnx"))
    artifact = tmp_path / "m.ingot"
    compile_model(tmp_path / "q.onnx", artifact)
    kernels = kernels_of(artifact)  # "mul": the weight scales' product
    assert set(kernels) == {"dynamic_quantize_linear", "mul",
                            "matmul_integer"}, kernels
    for rows in (1, 13, 64):
        feed = {"x": r.normal(0, 1, (rows, 72)).astype(F32)}
        got = run_model(artifact, feed, tmp_path)
        assert_same(got, ort_run(exact_twin(q), feed))


def test_blocked_scale_of_the_wrong_shape_is_refused(tmp_path):
    """Blocks of 2 over 4 columns need 2 scales per row, not 3."""
    model = make_model(
        [node("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=2)],
        [("x", I8, [3, 4])], ["y"], {"s": np.ones((3, 3), F32)}, opset=21,
        check=False)
    err = compile_error(tmp_path, model)
    assert "DequantizeLinear" in err, err
    assert "x_scale is [3,3] for 2 blocks of 2 on axis 1" in err, err


@pytest.mark.parametrize("a_type,b_type,y_type,per_column",
                         [(U8, I8, U8, False), (U8, U8, U8, True),
                          (I8, I8, I8, True)],
                         ids=["u8s8_u8", "u8u8_per_column", "s8s8_per_column"])
def test_qlinear_matmul(tmp_path, a_type, b_type, y_type, per_column):
    """QLinearMatMul as onnxruntime's static quantiser writes it: the int32
    product on the int8 kernel, one multiply by a_scale * b_scale / y_scale
    (per output column when b's scale is), rounded half to even and
    saturated; bit-exact. The scales keep most values inside the range."""
    r = rng_for(f"qlmm{a_type}{b_type}{y_type}{per_column}")
    ai, bi, yi = np.iinfo(a_type), np.iinfo(b_type), np.iinfo(y_type)
    a = r.integers(ai.min, ai.max, (3, 5, 37), dtype=a_type, endpoint=True)
    b = r.integers(bi.min, bi.max, (37, 19), dtype=b_type, endpoint=True)
    cols = (19,) if per_column else ()
    inits = {
        "a_s": np.array(r.uniform(0.01, 0.05), F32),
        "a_zp": np.array(r.integers(ai.min, ai.max), a_type),
        "b": b,
        "b_s": r.uniform(0.01, 0.05, cols).astype(F32),
        "b_zp": (r.integers(bi.min, bi.max, cols).astype(b_type)
                 if b_type == U8 else np.zeros(cols, b_type)),
        "y_s": np.array(r.uniform(2.0, 6.0), F32),
        "y_zp": np.array(r.integers(yi.min // 2, yi.max // 2), y_type)}
    model = make_model(
        [node("QLinearMatMul", ["a", "a_s", "a_zp", "b", "b_s", "b_zp",
                                "y_s", "y_zp"], ["y"])],
        [("a", a_type, [3, 5, 37])], ["y"], inits, opset=13)
    got, want = run_both(tmp_path, model, {"a": a})
    assert_same(got, want)
    inside = (want["y"] > yi.min) & (want["y"] < yi.max)
    assert inside.mean() > 0.4, inside.mean()  # not a saturated blur


@pytest.mark.parametrize("axis,block", [(1, 4), (0, 3)],
                         ids=["axis1_block4", "axis0_block3_ragged"])
def test_blocked_quantize_and_dequantize(tmp_path, axis, block):
    """Opset 21's block_size: one scale and zero point per `block`
    elements along `axis`, the last block shorter when the axis is not a
    multiple (7 rows in blocks of 3). Dequantize int8 weights, quantize
    floats back to uint8."""
    r = rng_for(f"blocked{axis}{block}")
    shape = (7, 12)
    blocks = list(shape)
    blocks[axis] = -(-shape[axis] // block)
    w = r.integers(-128, 127, shape, dtype=I8, endpoint=True)
    x = r.normal(0, 2, shape).astype(F32)
    inits = {"w": w,
             "w_s": r.uniform(0.01, 0.1, blocks).astype(F32),
             "w_zp": r.integers(-10, 10, blocks).astype(I8),
             "y_s": r.uniform(0.01, 0.05, blocks).astype(F32),
             "y_zp": r.integers(100, 150, blocks).astype(U8)}
    attrs = {"axis": axis, "block_size": block}
    model = make_model(
        [node("DequantizeLinear", ["w", "w_s", "w_zp"], ["wf"], **attrs),
         node("Add", ["wf", "x"], ["sum"]),
         node("QuantizeLinear", ["sum", "y_s", "y_zp"], ["q"], **attrs)],
        [("x", F32, list(shape))], ["wf", "q"], inits, opset=21)
    assert_same(*run_both(tmp_path, model, {"x": x}))
