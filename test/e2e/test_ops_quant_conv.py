"""ConvInteger and QLinearConv against onnxruntime, bit-exact: both sides
sum the 8-bit products in int32 exactly (padding holds the input's zero
point, so it adds 0) and QLinearConv rounds one float multiply by
x_scale * w_scale / y_scale half to even. Covers uint8/int8 operands,
per-tensor and per-output-channel weight zero points and scales, padding,
strides, dilations, groups, 1-D and 2-D windows, and a CNN written by
onnxruntime's own static quantiser in its QOperator format.
"""
import numpy as np
import onnx
import pytest
from ingot_testlib import (compile_model, make_model, node, run_model,
                           save_model)
from onnx.reference import ReferenceEvaluator
from ops_case_lib import compile_error
from test_ops_quant import U8, I8, I32, F32, assert_same, rng_for, run_both

CASES = {
    # name: x dtype, w dtype, x shape, w shape, per-channel w zp, attrs
    "u8s8_pads_stride2": (U8, I8, [2, 3, 9, 11], [5, 3, 3, 3], False,
                          {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "u8u8_per_channel_group2_dilated": (
        U8, U8, [1, 4, 10, 10], [6, 2, 3, 3], True,
        {"group": 2, "dilations": [2, 2], "pads": [2, 1, 0, 2]}),
    "s8s8_1d_same_upper": (I8, I8, [2, 8, 17], [7, 8, 5], True,
                           {"auto_pad": "SAME_UPPER"}),
    "u8s8_1x1": (U8, I8, [1, 16, 6, 7], [24, 16, 1, 1], False, {}),
}


def random_of(r, dtype, shape):
    info = np.iinfo(dtype)
    return r.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_conv_integer(tmp_path, case):
    x_type, w_type, x_shape, w_shape, per_channel, attrs = CASES[case]
    r = rng_for("convint" + case)
    x, w = random_of(r, x_type, x_shape), random_of(r, w_type, w_shape)
    xzp = np.array(r.integers(0, 60) if x_type == U8 else
                   r.integers(-20, 20), x_type)
    wzp = (random_of(r, w_type, [w_shape[0]]) if per_channel else
           np.array(random_of(r, w_type, []), w_type))
    model = make_model(
        [node("ConvInteger", ["x", "w", "xzp", "wzp"], ["y"], **attrs),
         node("ConvInteger", ["x", "w"], ["y_no_zp"], **attrs)],
        [("x", x_type, x_shape)], ["y", "y_no_zp"],
        {"w": w, "xzp": xzp, "wzp": wzp}, opset=13)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    got = run_model(artifact, {"x": x}, tmp_path)
    # onnxruntime's ConvInteger takes one weight zero point only, and its
    # CPU Conv no float64: the reference is onnx's reference evaluator's
    # float64 Conv of the operands minus their zero points, exact at these
    # sizes (|sums| < 2^53).
    wzp_b = wzp.astype(np.int64).reshape((-1,) + (1,) * (len(w_shape) - 1))
    want = {}
    for name, xz, wz in [("y", int(xzp), wzp_b), ("y_no_zp", 0, 0)]:
        ref = make_model(
            [node("Conv", ["x", "w"], ["y"], **attrs)],
            [("x", np.float64, x_shape)], ["y"],
            {"w": (w.astype(np.int64) - wz).astype(np.float64)}, opset=13)
        feed = {"x": (x.astype(np.int64) - xz).astype(np.float64)}
        out = ReferenceEvaluator(ref).run(None, feed)[0]
        want[name] = out.astype(I32)
    assert_same(got, want)
    assert np.abs(want["y"]).max() > 1000


@pytest.mark.parametrize("case", ["u8s8_pads_stride2",
                                  "u8u8_per_channel_group2_dilated",
                                  "s8s8_1d_same_upper"])
def test_qlinear_conv(tmp_path, case):
    """With an int32 bias; weight scales per output channel where the
    case's zero points are. y_scale keeps most outputs unsaturated."""
    x_type, w_type, x_shape, w_shape, per_channel, attrs = CASES[case]
    r = rng_for("qlconv" + case)
    m = w_shape[0]
    chans = (m,) if per_channel else ()
    taps = int(np.prod(w_shape[1:]))
    inits = {
        "x_s": np.array(r.uniform(0.01, 0.05), F32),
        "x_zp": np.array(r.integers(0, 60) if x_type == U8 else
                         r.integers(-20, 20), x_type),
        "w": random_of(r, w_type, w_shape),
        "w_s": r.uniform(0.01, 0.05, chans).astype(F32),
        "w_zp": (r.integers(100, 150, chans).astype(w_type) if w_type == U8
                 else np.zeros(chans, w_type)),
        "y_s": np.array(r.uniform(0.5, 1.0) * taps * 0.02, F32),
        "y_zp": np.array(r.integers(-30, 30) if x_type == I8 else
                         r.integers(100, 150), x_type),
        "b": r.integers(-5000, 5000, (m,)).astype(I32)}
    model = make_model(
        [node("QLinearConv", ["x", "x_s", "x_zp", "w", "w_s", "w_zp", "y_s",
                              "y_zp", "b"], ["y"], **attrs)],
        [("x", x_type, x_shape)], ["y"], inits, opset=13)
    x = random_of(r, x_type, x_shape)
    got, want = run_both(tmp_path, model, {"x": x})
    assert_same(got, want)
    info = np.iinfo(x_type)
    inside = (want["y"] > info.min) & (want["y"] < info.max)
    assert inside.mean() > 0.4, inside.mean()  # not a saturated blur


class _Reader:
    """Calibration batches for quantize_static."""

    def __init__(self, batches):
        self.batches = iter(batches)

    def get_next(self):
        return next(self.batches, None)


def quantize_qoperator(tmp_path, fp32, r, x_shape):
    """fp32 (input "x") through onnxruntime's quantize_static in QOperator
    format: uint8 activations calibrated on 8 random batches, per-channel
    int8 weights."""
    from onnxruntime.quantization import (QuantFormat, QuantType,
                                          quantize_static)
    save_model(fp32, tmp_path / "fp32.onnx")
    calib = [{"x": r.normal(0, 1, x_shape).astype(F32)} for _ in range(8)]
    quantize_static(str(tmp_path / "fp32.onnx"), str(tmp_path / "q.onnx"),
                    _Reader(calib), quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=True)
    return onnx.load(str(tmp_path / "q.onnx"))


def test_cnn_quantized_by_onnxruntime(tmp_path):
    """Conv-Relu-Conv-GlobalAveragePool quantised by onnxruntime's
    quantize_static in QOperator format (QLinearConv with per-channel int8
    weights, QuantizeLinear/DequantizeLinear at the edges): every QLinear
    op on ingot's int8 kernels, outputs equal to onnxruntime's."""
    r = rng_for("qcnn")
    fp32 = make_model(
        [node("Conv", ["x", "w1", "b1"], ["h"], pads=[1, 1, 1, 1]),
         node("Relu", ["h"], ["hr"]),
         node("Conv", ["hr", "w2", "b2"], ["h2"], strides=[2, 2]),
         node("GlobalAveragePool", ["h2"], ["y"])],
        [("x", F32, [1, 3, 16, 16])], ["y"],
        {"w1": r.normal(0, 0.3, (8, 3, 3, 3)).astype(F32),
         "b1": r.normal(0, 0.1, (8,)).astype(F32),
         "w2": r.normal(0, 0.2, (12, 8, 3, 3)).astype(F32),
         "b2": r.normal(0, 0.1, (12,)).astype(F32)}, opset=13)
    q = quantize_qoperator(tmp_path, fp32, r, (1, 3, 16, 16))
    ops = [n.op_type for n in q.graph.node]
    assert ops.count("QLinearConv") == 2, ops
    x = r.normal(0, 1, (1, 3, 16, 16)).astype(F32)
    assert_same(*run_both(tmp_path, q, {"x": x}))


def test_qoperator_contrib_ops_quantized_by_onnxruntime(tmp_path):
    """A small residual CNN whose every op onnxruntime's QOperator
    quantiser rewrites: QLinearConv, QLinearLeakyRelu, QLinearAdd,
    QLinearSigmoid, QLinearMul, QLinearConcat, QLinearAveragePool,
    QLinearGlobalAveragePool and QGemm (com.microsoft), MaxPool and
    Flatten on the 8-bit values. ingot expands the contrib ops into
    DequantizeLinear -> float op -> QuantizeLinear; onnxruntime computes
    some of them with reordered float arithmetic, so an output may differ
    by one quantisation step where a value lies on a rounding boundary:
    the check is |diff| <= 1 step on the uint8 tensor before the final
    dequantisation, differing on at most 5% of the outputs."""
    r = rng_for("qcontrib")
    w = lambda *s: r.normal(0, 0.3, s).astype(F32)  # noqa: E731
    fp32 = make_model(
        [node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
         node("LeakyRelu", ["c1"], ["a1"], alpha=0.1),
         node("Conv", ["a1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
         node("Add", ["c2", "a1"], ["res"]),
         node("Sigmoid", ["res"], ["gate"]),
         node("Mul", ["res", "gate"], ["swish"]),
         node("Concat", ["swish", "a1"], ["cat"], axis=1),
         node("MaxPool", ["cat"], ["mp"], kernel_shape=[2, 2],
              strides=[2, 2]),
         node("AveragePool", ["mp"], ["ap"], kernel_shape=[3, 3],
              pads=[1, 1, 1, 1]),
         node("GlobalAveragePool", ["ap"], ["gap"]),
         node("Flatten", ["gap"], ["flat"]),
         node("Gemm", ["flat", "wf", "bf"], ["y"], transB=1)],
        [("x", F32, [2, 3, 12, 12])], ["y"],
        {"w1": w(8, 3, 3, 3), "b1": w(8), "w2": w(8, 8, 3, 3), "b2": w(8),
         "wf": w(5, 16), "bf": w(5)}, opset=13)
    q = quantize_qoperator(tmp_path, fp32, r, (2, 3, 12, 12))
    ops = {n.op_type for n in q.graph.node}
    assert {"QLinearConv", "QLinearLeakyRelu", "QLinearAdd", "QLinearMul",
            "QLinearSigmoid", "QLinearConcat", "QLinearAveragePool",
            "QLinearGlobalAveragePool", "QGemm", "MaxPool"} <= ops, ops
    # Compare the last quantised tensor (QGemm's uint8 output).
    last_q = next(n for n in q.graph.node if n.op_type == "QGemm").output[0]
    q.graph.output.append(onnx.helper.make_tensor_value_info(
        last_q, onnx.TensorProto.UINT8, None))
    x = r.normal(0, 1, (2, 3, 12, 12)).astype(F32)
    got, want = run_both(tmp_path, q, {"x": x})
    g, w8 = got[last_q].astype(np.int32), want[last_q].astype(np.int32)
    assert g.shape == w8.shape
    assert np.abs(g - w8).max() <= 1, (g, w8)
    assert (g != w8).mean() <= 0.05, (g != w8).mean()
    assert len(np.unique(w8)) > 3  # outputs vary: not a saturated blur


def test_uint8_max_pool_and_nearest_resize(tmp_path):
    """Ops that only select 8-bit values run on them exactly (through f32,
    which holds every one); interpolating Resize on uint8 is refused."""
    r = rng_for("u8select")
    x = random_of(r, U8, [1, 2, 6, 7])
    model = make_model(
        [node("MaxPool", ["x"], ["mp"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
              strides=[2, 2]),
         node("Resize", ["x", "", "scales"], ["up"], mode="nearest")],
        [("x", U8, [1, 2, 6, 7])], ["mp", "up"],
        {"scales": np.array([1, 1, 2, 1.5], F32)}, opset=13)
    assert_same(*run_both(tmp_path, model, {"x": x}))
    linear = make_model(
        [node("Resize", ["x", "", "scales"], ["up"], mode="linear")],
        [("x", U8, [1, 2, 6, 7])], ["up"],
        {"scales": np.array([1, 1, 2, 2], F32)}, opset=13)
    err = compile_error(tmp_path, linear)
    assert "an 8-bit input with mode 'linear'" in err, err
