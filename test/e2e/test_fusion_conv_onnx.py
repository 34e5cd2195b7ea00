"""Conv fusions on ONNX graphs as exporters write them: activations
(Relu, SiLU, HardSwish, LeakyRelu) and clamps (Clip, Max by a constant)
fused into the conv kernel, BatchNormalization and
PaddleOCR's scalar affines folded into its weights, and TensorFlow's 1-D
conv (a 2-D conv with a unit dim, then a Squeeze) run one rank lower with
its bias and GELU. Each graph is compiled with fusion on and off; both
artifacts must match onnxruntime within F32_RTOL (justified in
ingot_testlib), and bit for bit each other where nothing is folded: the
fused kernel runs each op's own per-element function on the same floats."""
import math

import numpy as np
import pytest

from ingot_testlib import (assert_close, compile_both, kernels_of, make_model,
                           node, ort_run, per_run_kernels, run_model,
                           save_model, seed_for)

F32 = np.float32


def hard_swish_nodes(y, out, inits):
    """HardSwish as paddle2onnx writes it: Add 3, Clip 0..6, Mul, Div 6."""
    inits.update({"three": np.array(3, F32), "zero": np.array(0, F32),
                  "six": np.array(6, F32)})
    return [node("Add", [y, "three"], [f"{y}_p3"]),
            node("Clip", [f"{y}_p3", "zero", "six"], [f"{y}_clip"]),
            node("Mul", [y, f"{y}_clip"], [f"{y}_m"]),
            node("Div", [f"{y}_m", "six"], [out])]


def conv_act_model(act, channels, size, kernel, group=1, residual=False):
    """Conv (+ bias) then SiLU (Sigmoid, Mul, as YOLO exports write it),
    Relu, HardSwish (as PaddleOCR's exports write it), ReLU6 (Clip 0..6) or
    LeakyRelu then Max by a constant (tf2onnx's clamped leaky ReLU in
    openWakeWord's embedding CNN), twice: a stride-1 conv and a stride-2
    one. With `residual` (C = M) the stride-1 conv's input is added to its
    activation, as YOLOv8's bottlenecks do."""
    rng = np.random.default_rng(11 + kernel + group)
    c, m = channels
    inits = {}
    nodes, x = [], "x"
    for i, stride in enumerate((1, 2)):
        cin = c if i == 0 else m
        inits[f"w{i}"] = (rng.standard_normal((m, cin // group, kernel,
                                               kernel)) /
                          np.sqrt(cin * kernel * kernel)).astype(F32)
        inits[f"b{i}"] = (0.5 * rng.standard_normal(m)).astype(F32)
        nodes.append(node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"],
                          pads=[kernel // 2] * 4, strides=[stride] * 2,
                          group=group))
        if act == "silu":
            nodes += [node("Sigmoid", [f"c{i}"], [f"s{i}"]),
                      node("Mul", [f"c{i}", f"s{i}"], [f"a{i}"])]
        elif act == "hard_swish":
            nodes += hard_swish_nodes(f"c{i}", f"a{i}", inits)
        elif act == "relu6":
            inits.update({"zero": np.array(0, F32), "six": np.array(6, F32)})
            nodes.append(node("Clip", [f"c{i}", "zero", "six"], [f"a{i}"]))
        elif act == "leaky_clamp":
            inits["floor"] = np.array([[[[-0.4]]]], F32)
            nodes += [node("LeakyRelu", [f"c{i}"], [f"l{i}"], alpha=0.2),
                      node("Max", [f"l{i}", "floor"], [f"a{i}"])]
        else:
            nodes.append(node("Relu", [f"c{i}"], [f"a{i}"]))
        if residual and i == 0:
            nodes.append(node("Add", [x, f"a{i}"], [f"r{i}"]))
            x = f"r{i}"
        else:
            x = f"a{i}"
    nodes.append(node("Identity", [x], ["y"]))
    return make_model(nodes, [("x", F32, ["batch", c, size, size])], ["y"],
                      inits)


# (activation, (C, M), spatial size, kernel, group): a 3x3 conv of group
# 1 (the implicit GEMM, its epilogue as lines are copied out), a grouped
# one large enough for the blocked im2col path (positions in blocks, each
# block's epilogue right after its GEMM), a 1x1 one read in place, a small
# grouped one and a depthwise one.
CONV_CASES = {"silu_3x3_implicit": ("silu", (16, 32), 96, 3, 1),
              "silu_grouped_blocked": ("silu", (128, 32), 45, 3, 2),
              "relu_1x1": ("relu", (24, 40), 20, 1, 1),
              "silu_grouped": ("silu", (8, 16), 24, 3, 2),
              "relu_depthwise": ("relu", (16, 16), 33, 3, 16),
              # 9 positions, 40 channels: with batch 2, one transposed
              # GEMM for both images, the epilogue after the transpose.
              "relu_narrow_batched": ("relu", (24, 40), 3, 3, 1),
              "hard_swish_3x3_implicit": ("hard_swish", (16, 32), 40, 3, 1),
              "hard_swish_1x1": ("hard_swish", (24, 40), 20, 1, 1),
              # PP-LCNet's 5x5 depthwise convs, lines of 37 (line pairs,
              # chunks of 32 + 16 and an overlapping tail) and 19.
              "hard_swish_depthwise_5x5": ("hard_swish", (16, 16), 37, 5, 16),
              "leaky_clamp_3x3_implicit": ("leaky_clamp", (16, 24), 30, 3, 1),
              "leaky_clamp_narrow": ("leaky_clamp", (24, 40), 3, 3, 1),
              "relu6_1x1": ("relu6", (24, 40), 20, 1, 1),
              "relu6_depthwise": ("relu6", (16, 16), 33, 3, 16)}
# The residual added after the activation, on each conv path: channel
# tiles (32 channels with a window, 64 in place), row tiles, depthwise,
# the transposed narrow GEMM over two images and the blocked grouped one.
RESIDUAL_CASES = {"silu_3x3_channel_tiles": ("silu", (32, 32), 40, 3, 1),
                  "silu_3x3_row_tiles": ("silu", (16, 16), 30, 3, 1),
                  "relu_1x1_in_place": ("relu", (64, 64), 20, 1, 1),
                  "silu_depthwise": ("silu", (16, 16), 33, 3, 16),
                  "relu_narrow_batched": ("relu", (40, 40), 3, 3, 1),
                  "silu_grouped_blocked": ("silu", (64, 64), 45, 3, 2)}


@pytest.mark.parametrize("name", [*CONV_CASES, *(
    f"residual_{k}" for k in RESIDUAL_CASES)])
def test_conv_activation_fused(name, tmp_path, request):
    """The activation (and a residual add) runs inside the conv kernel: no
    sigmoid, mul, relu, add or elementwise step is left, and the result is
    bit for bit the unfused one (the same per-element functions, the add
    last), and onnxruntime's within F32_RTOL."""
    residual = name.startswith("residual_")
    case = RESIDUAL_CASES[name[9:]] if residual else CONV_CASES[name]
    model = conv_act_model(*case, residual=residual)
    fused, unfused = compile_both(save_model(model, tmp_path / "m.onnx"),
                                  tmp_path, "--max-dim", "batch=2")
    kernels = kernels_of(fused)
    assert kernels.count("conv") == 2 and not {
        "sigmoid", "mul", "relu", "div", "add", "binary_math", "unary_math",
        "fused_elementwise"} & set(kernels), kernels
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    c, size = case[1][0], case[2]
    for batch in (1, 2):
        feed = {"x": rng.standard_normal((batch, c, size, size)).astype(F32)}
        want = ort_run(model, feed)["y"]
        got = run_model(fused, feed, tmp_path)["y"]
        plain = run_model(unfused, feed, tmp_path)["y"]
        assert_close(got, want, what=f"fused y, batch {batch}")
        assert np.array_equal(got.view(np.uint32), plain.view(np.uint32)), (
            f"fused and unfused differ at batch {batch}")


def check_folded(model, image, per_run, tmp_path, request):
    """Compiled with and without fusion: the steps every run does are
    `per_run`, and both artifacts match onnxruntime at batch 1 and 2, on
    their first run (which computes folded weights) and a later one."""
    fused, unfused = compile_both(save_model(model, tmp_path / "m.onnx"),
                                  tmp_path, "--max-dim", "batch=2")
    assert per_run_kernels(fused) == per_run, per_run_kernels(fused)
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    for batch in (1, 2):
        feed = {"x": rng.standard_normal((batch, *image)).astype(F32)}
        want = ort_run(model, feed)["y"]
        for artifact in (fused, unfused):
            for _ in range(2):
                got = run_model(artifact, feed, tmp_path)["y"]
                assert_close(got, want, what=f"{artifact.stem}, batch {batch}")


def conv_batch_norm_model(channels=12, size=19):
    """Conv (no bias) -> BatchNormalization -> Relu, then a depthwise conv
    with a bias -> BatchNormalization -> hard-swish as PaddlePaddle writes
    it (Add 3, Clip 0..6, Mul, Div 6): PP-OCR's conv blocks."""
    rng = np.random.default_rng(17)
    c = channels
    inits = {"w0": (rng.standard_normal((c, 3, 3, 3)) / 5).astype(F32),
             "w1": (rng.standard_normal((c, 1, 3, 3)) / 3).astype(F32),
             "b1": (0.5 * rng.standard_normal(c)).astype(F32),
             "three": np.array(3, F32), "zero": np.array(0, F32),
             "six": np.array(6, F32)}
    for i in (0, 1):
        inits[f"scale{i}"] = rng.uniform(0.5, 2.0, c).astype(F32)
        inits[f"shift{i}"] = rng.standard_normal(c).astype(F32)
        inits[f"mean{i}"] = rng.standard_normal(c).astype(F32)
        inits[f"var{i}"] = rng.uniform(0.1, 3.0, c).astype(F32)
    bn = ["scale{}", "shift{}", "mean{}", "var{}"]
    nodes = [node("Conv", ["x", "w0"], ["c0"], pads=[1] * 4, strides=[2] * 2),
             node("BatchNormalization", ["c0"] + [s.format(0) for s in bn],
                  ["n0"], epsilon=1e-3),
             node("Relu", ["n0"], ["r0"]),
             node("Conv", ["r0", "w1", "b1"], ["c1"], pads=[1] * 4, group=c),
             node("BatchNormalization", ["c1"] + [s.format(1) for s in bn],
                  ["n1"]),
             node("Add", ["n1", "three"], ["a1"]),
             node("Clip", ["a1", "zero", "six"], ["k1"]),
             node("Mul", ["n1", "k1"], ["m1"]),
             node("Div", ["m1", "six"], ["y"])]
    return make_model(nodes, [("x", F32, ["batch", 3, size, size])], ["y"],
                      inits)


def test_batch_norm_folds_into_the_conv(tmp_path, request):
    """Both BatchNormalizations fold into their convs' weights and biases
    (computed once, on the first run: constant steps), the Relu then fuses
    into the first conv and the hard-swish into the second, and what
    remains per run is the two convs; fused and unfused artifacts match
    onnxruntime within F32_RTOL (folding reorders the rounding, so not
    bit for bit)."""
    check_folded(conv_batch_norm_model(), (3, 19, 19), ["conv", "conv"],
                 tmp_path, request)


def lcnet_block_model(c=8, m=16, size=21):
    """PP-LCNetV3's block as paddle2onnx writes it: a depthwise 3x3 conv,
    the learnable affine (Mul by a [1] scale, Add a [1] bias), HardSwish,
    the affine again, then a pointwise conv with a bias and the same
    after it."""
    rng = np.random.default_rng(23)
    inits = {"wd": (rng.standard_normal((c, 1, 3, 3)) / 3).astype(F32),
             "bd": (0.5 * rng.standard_normal(c)).astype(F32),
             "wp": (rng.standard_normal((m, c, 1, 1)) / np.sqrt(c)).astype(F32),
             "bp": (0.5 * rng.standard_normal(m)).astype(F32)}
    for i in range(4):
        inits[f"s{i}"] = rng.uniform(0.5, 2.0, 1).astype(F32)
        inits[f"t{i}"] = rng.uniform(-1.0, 1.0, 1).astype(F32)

    def affine(x, i):
        return [node("Mul", [f"s{i}", x], [f"{x}_s"]),
                node("Add", [f"{x}_s", f"t{i}"], [f"{x}_a"])]

    nodes = [node("Conv", ["x", "wd", "bd"], ["d"], pads=[1] * 4, group=c)]
    nodes += affine("d", 0) + hard_swish_nodes("d_a", "h0", inits)
    nodes += affine("h0", 1)
    nodes.append(node("Conv", ["h0_a", "wp", "bp"], ["p"]))
    nodes += affine("p", 2) + hard_swish_nodes("p_a", "h1", inits)
    nodes += affine("h1", 3)
    nodes.append(node("Identity", ["h1_a"], ["y"]))
    return make_model(nodes, [("x", F32, ["batch", c, size, size])], ["y"],
                      inits)


def test_learnable_affine_folds_into_the_convs(tmp_path, request):
    """The affine before each HardSwish folds into its conv (a scalar
    scale and shift of the output), the HardSwish fuses into the conv, and
    the affine after the first one folds into the unpadded pointwise conv
    that reads it (W·s, and b·ΣW added to the bias): per run, two convs
    and the last affine, which no conv reads. Folding reorders the
    rounding, so fused and unfused match onnxruntime within F32_RTOL, not
    bit for bit."""
    check_folded(lcnet_block_model(), (8, 21, 21),
                 ["conv", "conv", "fused_elementwise"], tmp_path, request)


def tf_conv1d_head_model(c=16, m=24, length=40):
    """Magika's head as jax2tf writes it: a 1-D conv as a 2-D one over
    [N, C, L, 1], a whole-tensor Slice (ends of 10^9), a Squeeze of the
    unit dim, the bias Add, the tanh GELU with x^3 as x * (x * (c * x)),
    and a ReduceMax over positions."""
    rng = np.random.default_rng(29)
    c3 = 0.044715
    inits = {"w": (rng.standard_normal((m, c, 5, 1)) / np.sqrt(5 * c))
             .astype(F32),
             "b": (0.5 * rng.standard_normal((1, m, 1))).astype(F32),
             "starts": np.zeros(4, np.int64),
             "ends": np.full(4, 10**9, np.int64),
             "axes": np.arange(4, dtype=np.int64),
             "steps": np.ones(4, np.int64),
             "sq": np.array([3], np.int64), "k": np.array(c3, F32),
             "s": np.array(math.sqrt(2 / math.pi), F32),
             "one": np.array(1, F32), "half": np.array(0.5, F32)}
    nodes = [node("Conv", ["x", "w"], ["c"], kernel_shape=[5, 1]),
             node("Slice", ["c", "starts", "ends", "axes", "steps"], ["cs"]),
             node("Squeeze", ["cs", "sq"], ["q"]),
             node("Add", ["q", "b"], ["h"]),
             node("Mul", ["k", "h"], ["kh"]), node("Mul", ["h", "kh"], ["hkh"]),
             node("Mul", ["h", "hkh"], ["h3"]), node("Add", ["h", "h3"], ["u"]),
             node("Mul", ["u", "s"], ["us"]), node("Tanh", ["us"], ["t"]),
             node("Add", ["t", "one"], ["t1"]),
             node("Mul", ["h", "half"], ["hh"]),
             node("Mul", ["hh", "t1"], ["g"]),
             node("ReduceMax", ["g"], ["y"], axes=[2], keepdims=1)]
    model = make_model(nodes, [("x", F32, ["batch", c, length, 1])], ["y"],
                       inits)
    model.opset_import[0].version = 17
    return model


def test_tf_conv1d_head_fuses(tmp_path, request):
    """The Slice folds away, the conv drops its unit dim (the input's
    squeeze is what precedes it), takes the bias and the GELU, and a
    reduce is all that follows it per run; fused and unfused match
    onnxruntime within F32_RTOL (the bias joins the conv's sums, so not
    bit for bit)."""
    check_folded(tf_conv1d_head_model(), (16, 40, 1),
                 ["squeeze", "conv", "reduce"], tmp_path, request)
