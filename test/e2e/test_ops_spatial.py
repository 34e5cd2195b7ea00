"""The spatial and encoding part of the tensor-family ops, compiled by ingot
and compared with onnxruntime: Conv, pooling, DepthToSpace, OneHot and
NonZero (Resize and Upsample are in test_ops_resize.py, the rest of the
family in test_ops_tensor.py; shared helpers in ops_case_lib.py). f32 within the shared relative tolerance, integers
exact.

Each case is a one-node model (MaxPool may have two outputs). Shape operands
(pads, scales, sizes) are initializers unless a case is about run-time
values; symbolic dims run at two sizes from one artifact.
"""
import numpy as np
import pytest

from ingot_testlib import (Model, compile_model, make_model,
                           node, run_model, save_model)
from ops_case_lib import (check_case,
                          BOOL, F32, I32, I64, f32, i64, idx_gen, one,
                          results_fixture, signed, sym2)

CASES, KEYS = [], {}
# Data-dependent sizes (NonZero's count, a Slice or TopK whose parameters are
# run-time inputs) are bounded by ComputeBounds through
# graph::boundTensorResult (n <= numel, a slice <= its input dim).


def case(model, marks=()):
    assert KEYS.setdefault(model.key, model) is model, f"dup key {model.key}"
    CASES.append(pytest.param(model, id=model.key, marks=marks))


# -- Conv ---------------------------------------------------------------------
w_rng = np.random.default_rng(7)


def w(*shape):
    return w_rng.uniform(-1, 1, shape).astype(F32)


for key, xs, ws, bias, attrs, sizes in [
        ("3x3_pad", [1, 3, 8, 8], [4, 3, 3, 3], True, {"pads": [1, 1, 1, 1]},
         ({},)),
        ("stride2_nobias", [2, 2, 9, 7], [3, 2, 3, 3], False,
         {"strides": [2, 2]}, ({},)),
        ("dilated_asym_pads", [1, 2, 10, 9], [2, 2, 3, 2], True,
         {"dilations": [2, 1], "pads": [2, 0, 1, 1]}, ({},)),
        ("group2", [1, 4, 6, 6], [6, 2, 3, 3], True, {"group": 2}, ({},)),
        ("depthwise", [1, 3, 5, 5], [3, 1, 3, 3], True,
         {"group": 3, "pads": [1, 1, 1, 1]}, ({},)),
        # Depthwise (one input channel per group) has a kernel of its own:
        # strides, asymmetric pads wider than the taps reach, dilations,
        # channel multipliers, 1-D and 3-D, symbolic spatial dims.
        # Large outputs run as parallel blocks of output positions (the
        # last one ragged).
        ("blocked_3x3", [1, 64, 45, 41], [4, 64, 3, 3], True,
         {"pads": [1, 1, 1, 1]}, ({},)),
        ("blocked_s2_dil", [2, 32, 200, 70], [8, 32, 3, 3], False,
         {"pads": [2, 1, 0, 1], "strides": [2, 1], "dilations": [2, 1]},
         ({},)),
        ("dw_5x5_s2_asym", [2, 4, 12, 11], [4, 1, 5, 5], False,
         {"group": 4, "pads": [2, 1, 3, 2], "strides": [2, 2]}, ({},)),
        ("dw_mult2_dil", [1, 3, 9, 10], [6, 1, 3, 3], True,
         {"group": 3, "pads": [2, 2, 2, 2], "dilations": [2, 2]}, ({},)),
        ("dw_stride_w3", [1, 2, 7, 17], [2, 1, 3, 4], True,
         {"group": 2, "pads": [1, 0, 1, 5], "strides": [1, 3]}, ({},)),
        ("dw_1d", [2, 5, 20], [5, 1, 7], True,
         {"group": 5, "pads": [3, 3]}, ({},)),
        ("dw_3d", [1, 3, 4, 5, 6], [3, 1, 3, 3, 3], True,
         {"group": 3, "pads": [1, 1, 1, 1, 1, 1]}, ({},)),
        # Rows wide enough for the register chunks of 16 outputs (stride
        # 1, 2 and other strides have loops of their own) with ragged ends.
        ("dw_wide_s1", [1, 6, 5, 70], [6, 1, 3, 3], True,
         {"group": 6, "pads": [1, 1, 1, 1]}, ({},)),
        ("dw_wide_s2_5x5", [2, 3, 9, 83], [3, 1, 5, 5], True,
         {"group": 3, "pads": [2, 2, 2, 2], "strides": [2, 2]}, ({},)),
        ("dw_wide_s3_dil", [1, 4, 4, 150], [8, 1, 2, 3], False,
         {"group": 4, "pads": [0, 3, 1, 2], "strides": [1, 3],
          "dilations": [1, 2]}, ({},)),
        ("dw_sym", [1, 8, "h", "w"], [8, 1, 3, 3], True,
         {"group": 8, "auto_pad": "SAME_UPPER"},
         ({"h": 5, "w": 9}, {"h": 12, "w": 3})),
        ("1x1", [2, 8, 4, 4], [5, 8, 1, 1], True, {}, ({},)),
        ("same_upper", [1, 2, 7, 6], [3, 2, 3, 3], False,
         {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, ({},)),
        ("same_lower", [1, 2, 6, 6], [3, 2, 2, 2], True,
         {"auto_pad": "SAME_LOWER"}, ({},)),
        ("valid", [1, 2, 6, 5], [2, 2, 3, 3], True, {"auto_pad": "VALID"},
         ({},)),
        ("1d", [2, 3, 10], [4, 3, 3], True, {"pads": [1, 2],
                                             "strides": [2]}, ({},)),
        ("1d_group_dil", [1, 4, 12], [4, 2, 3], False,
         {"group": 2, "dilations": [3]}, ({},)),
        ("sym_batch", ["n", 3, 6, 6], [2, 3, 3, 3], True, {"pads": [1, 1, 1, 1]},
         sym2(1, 3)),
        ("sym_spatial", [1, 2, "h", "h"], [2, 2, 3, 3], True,
         {"auto_pad": "SAME_UPPER"}, ({"h": 5}, {"h": 8})),
        ("sym_channels", [1, "c", 5, 5], [2, 3, 3, 3], True, {},
         ({"c": 3},)),
        # Fewer than 16 output positions, more channels, several images:
        # one transposed GEMM per run of images (silero VAD's shapes first).
        ("narrow_batch_1d", [10, 129, 4], [128, 129, 3], True,
         {"pads": [1, 1]}, ({},)),
        ("narrow_batch_s2_nobias", [3, 6, 5, 3], [20, 6, 3, 3], False,
         {"strides": [2, 2], "pads": [1, 1, 1, 1]}, ({},)),
        ("narrow_batch_sym", ["n", 4, 3], [12, 4, 2], True, {}, sym2(2, 5)),
        # One input channel's 1-D windows of 32 taps or more (an STFT
        # front end): a GEMM over x's windows in place. Several images, a
        # symbolic length, a 2-D conv with a unit height, and a padded one
        # (which takes the im2col path).
        ("signal_stft", [2, 1, 1200], [65, 1, 128], True,
         {"strides": [40]}, ({},)),
        ("signal_sym", [1, 1, "t"], [33, 1, 32], False, {"strides": [7]},
         ({"t": 200}, {"t": 45})),
        ("signal_2d_unit_h", [1, 1, 1, 300], [16, 1, 1, 64], True,
         {"strides": [1, 16]}, ({},)),
        ("signal_padded", [1, 1, 300], [16, 1, 64], True,
         {"strides": [16], "pads": [32, 32]}, ({},)),
        ("3d", [1, 2, 5, 6, 4], [3, 2, 3, 2, 3], True,
         {"pads": [1, 0, 1, 1, 1, 0], "strides": [2, 1, 1]}, ({},)),
        ("3d_group_same", [2, 4, 4, 4, 5], [4, 2, 2, 3, 1], False,
         {"group": 2, "auto_pad": "SAME_LOWER"}, ({},))]:
    args = [("x", F32, xs), ("w", w(*ws))]
    if bias:
        args.append(("b", w(ws[0])))
    case(one(f"conv_{key}", "Conv", args, opset=13,
             sizes=sizes, **attrs))

# -- ConvTranspose (weight [C, M/group, k...]) ---------------------------------
for key, xs, ws, bias, attrs, sizes in [
        ("s2_k2", [1, 8, 5, 6], [8, 4, 2, 2], False, {"strides": [2, 2]},
         ({},)),
        ("pads_outpad", [2, 3, 7, 5], [3, 2, 3, 3], True,
         {"strides": [2, 3], "pads": [1, 0, 2, 1], "output_padding": [1, 2]},
         ({},)),
        ("dil_group", [1, 4, 6, 6], [4, 3, 3, 2], True,
         {"group": 2, "dilations": [2, 3], "strides": [1, 2]}, ({},)),
        ("1d", [2, 3, 9], [3, 5, 4], True, {"strides": [3], "pads": [1, 2]},
         ({},)),
        ("3d", [1, 2, 3, 4, 3], [2, 3, 2, 3, 2], True,
         {"strides": [2, 1, 2], "pads": [0, 1, 0, 0, 1, 1]}, ({},)),
        ("valid_sym", [1, 6, "h", "w"], [6, 2, 2, 2], True,
         {"strides": [2, 2], "auto_pad": "VALID"},
         ({"h": 3, "w": 7}, {"h": 9, "w": 2})),
        # Derived pads: odd totals split both ways, a target larger than
        # the pad-free output (zero-filled end), explicit pads that an
        # output_shape overrides, and pads that follow a run-time size.
        ("same_upper", [1, 2, 3, 4], [2, 3, 3, 3], True,
         {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, ({},)),
        ("same_upper_s1", [1, 2, 3, 4], [2, 3, 4, 2], False,
         {"auto_pad": "SAME_UPPER"}, ({},)),
        ("same_upper_k1", [1, 2, 4, 3], [2, 2, 1, 1], False,
         {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, ({},)),
        ("same_lower_sym", [1, 2, "h", "w"], [2, 3, 3, 3], False,
         {"auto_pad": "SAME_LOWER", "strides": [2, 2]},
         ({"h": 3, "w": 4}, {"h": 6, "w": 2})),
        ("output_shape_grow", [1, 1, 3, 3], [1, 2, 3, 3], False,
         {"output_shape": [10, 8], "strides": [3, 2]}, ({},)),
        ("output_shape_cut", [1, 2, 3, 3], [2, 2, 3, 3], True,
         {"output_shape": [6, 5], "strides": [2, 2], "pads": [1, 1, 1, 1]},
         ({},)),
        ("output_shape_same_lower_sym", [1, 2, "h", 4], [2, 3, 4, 2], False,
         {"auto_pad": "SAME_LOWER", "strides": [2, 3],
          "output_shape": [7, 9]}, ({"h": 3}, {"h": 4}))]:
    args = [("x", F32, xs), ("w", w(*ws))]
    if bias:
        args.append(("b", w(ws[1] * attrs.get("group", 1))))
    case(one(f"conv_transpose_{key}", "ConvTranspose", args, opset=11,
             sizes=sizes, **attrs))

# -- Pooling ------------------------------------------------------------------
for op in ("MaxPool", "AveragePool"):
    for key, xs, attrs, sizes in [
            ("2x2_s2", [1, 2, 6, 6], {"kernel_shape": [2, 2],
                                      "strides": [2, 2]}, ({},)),
            ("3x3_pad", [2, 1, 5, 7], {"kernel_shape": [3, 3],
                                       "pads": [1, 1, 1, 1]}, ({},)),
            ("5x5_s1", [1, 3, 10, 10], {"kernel_shape": [5, 5],
                                        "pads": [2, 2, 2, 2]}, ({},)),
            ("3x2_s1_asym", [1, 2, 9, 21], {"kernel_shape": [3, 2],
                                            "pads": [1, 0, 2, 1]}, ({},)),
            ("ceil", [1, 2, 7, 7], {"kernel_shape": [2, 2], "strides": [2, 2],
                                    "ceil_mode": 1}, ({},)),
            ("ceil_pad", [1, 1, 6, 6], {"kernel_shape": [3, 3],
                                        "strides": [2, 2], "ceil_mode": 1,
                                        "pads": [1, 1, 1, 1]}, ({},)),
            ("same_upper", [1, 2, 5, 6], {"kernel_shape": [3, 2],
                                          "strides": [2, 1],
                                          "auto_pad": "SAME_UPPER"}, ({},)),
            ("1d", [2, 3, 9], {"kernel_shape": [3], "strides": [2],
                               "pads": [1, 0]}, ({},)),
            ("sym", ["n", 2, 6, 6], {"kernel_shape": [3, 3]}, sym2(1, 2)),
            ("3d", [1, 2, 5, 4, 6], {"kernel_shape": [2, 3, 2],
                                     "strides": [2, 1, 2],
                                     "pads": [1, 1, 0, 0, 1, 1]}, ({},))]:
        case(one(f"{op.lower()}_{key}", op, [("x", F32, xs)], opset=13,
                 sizes=sizes, gen={"x": signed}, **attrs))
for key, attrs in [("include_pad", {"count_include_pad": 1,
                                    "pads": [1, 1, 1, 1]}),
                   ("include_pad_ceil", {"count_include_pad": 1,
                                         "pads": [1, 1, 1, 1],
                                         "strides": [2, 2], "ceil_mode": 1})]:
    case(one(f"averagepool_{key}", "AveragePool", [("x", F32, [1, 2, 6, 5])],
             opset=13, kernel_shape=[3, 3], **attrs))
case(one("maxpool_dilated", "MaxPool", [("x", F32, [1, 1, 8, 8])], opset=13,
         gen={"x": signed}, kernel_shape=[2, 2], dilations=[2, 2]))
for key, xs, attrs in [("2d_pads", [2, 3, 5, 6], {"kernel_shape": [3, 3],
                                                  "pads": [1, 1, 1, 1],
                                                  "strides": [2, 2]}),
                       ("1d", [1, 2, 9], {"kernel_shape": [3]}),
                       ("storage_order_1", [1, 2, 4, 6],
                        {"kernel_shape": [2, 2], "storage_order": 1})]:
    case(one(f"maxpool_indices_{key}", "MaxPool", [("x", F32, xs)], opset=13,
             gen={"x": signed}, outputs=("y", "i"), **attrs))
for key, xs, sizes in [("2d", [2, 3, 5, 4], ({},)), ("1d", [1, 4, 7], ({},)),
                       ("sym", ["n", 3, 4, 4], sym2(1, 3))]:
    case(one(f"global_average_pool_{key}", "GlobalAveragePool",
             [("x", F32, xs)], opset=13, sizes=sizes))

# -- DepthToSpace, OneHot, NonZero -------------------------------------------
for mode in ("DCR", "CRD"):
    case(one(f"depth_to_space_{mode.lower()}", "DepthToSpace",
             [("x", F32, [2, 8, 2, 3])], opset=13, blocksize=2, mode=mode))
case(one("depth_to_space_b3_sym", "DepthToSpace", [("x", F32, ["n", 9, 2, 2])],
         opset=13, blocksize=3, sizes=sym2(1, 2)))
case(one("space_to_depth", "SpaceToDepth", [("x", F32, [2, 3, 4, 6])],
         opset=13, blocksize=2))
case(one("space_to_depth_b3_sym", "SpaceToDepth", [("x", F32, ["n", 2, 6, 3])],
         opset=13, blocksize=3, sizes=sym2(1, 2)))
for key, ishape, dt, axis, depth, lo, hi, vals in [
        ("last", [4], I64, -1, 5, -5, 7, f32(0, 1)),
        ("axis0", [2, 3], I64, 0, 4, 0, 4, f32(-1, 3)),
        ("mid_int32", [2, 3], I32, 1, 6, -6, 6, f32(0.5, 2)),
        ("int64_values", [3], I64, -1, 3, 0, 3, i64(7, 9))]:
    case(one(f"one_hot_{key}", "OneHot",
             [("i", dt, ishape), ("d", np.array(depth, dt)), ("v", vals)],
             opset=13, gen={"i": idx_gen(lo, hi, dt)}, axis=axis))
# A depth fed at run time sizes the new dim when the plan runs: one
# artifact at two index counts, each run drawing a depth (a float one is
# truncated, as ONNX casts it); indices past it give all-off rows.
case(one("one_hot_run_time_depth_f32", "OneHot",
         [("i", I64, ["n", 3]), ("d", F32, [1]), ("v", f32(0, 1))],
         opset=13, sizes=sym2(2, 4), axis=1,
         gen={"i": idx_gen(-6, 8),
              "d": lambda r, s: (r.integers(3, 7, s) + 0.6).astype(F32)}))
case(one("one_hot_run_time_depth_i64_scalar", "OneHot",
         [("i", I64, ["n"]), ("d", I64, []), ("v", i64(-2, 5))],
         opset=13, sizes=sym2(3, 7), axis=-1,
         gen={"i": idx_gen(-4, 4),
              "d": lambda r, s: r.integers(1, 5, s).astype(I64)}))
for key, dt, shape in [("f32", F32, [3, 4]), ("int64_3d", I64, [2, 3, 2]),
                       ("bool", BOOL, [5])]:
    case(one(f"non_zero_{key}", "NonZero", [("x", dt, shape)], opset=13,
             gen={"x": lambda r, s: (r.integers(0, 2, s) *
                                     r.integers(1, 5, s))}))


# -----------------------------------------------------------------------------
results = results_fixture()


@pytest.mark.parametrize("model", CASES)
def test_op(model, results):
    check_case(results, model)



@pytest.mark.parametrize("attrs,message", [
    ({"auto_pad": "SAME_EVEN", "strides": [2, 2]},
     "auto_pad SAME_EVEN — supported: NOTSET, VALID, SAME_UPPER or "
     "SAME_LOWER"),
    ({"output_shape": [10], "strides": [2, 2]},
     "an output_shape of 1 dims — supported: 2 (one per spatial dim)"),
], ids=["bad_auto_pad", "output_shape_rank"])
def test_conv_transpose_bad_derived_pads_are_refused(attrs, message,
                                                     tmp_path):
    """An auto_pad onnx does not define, or an output_shape that is not one
    size per spatial dim: refused naming what is supported."""
    from ingot_testlib import (assert_clean_failure, compile_model,
                               make_model, node, save_model)
    model = make_model([node("ConvTranspose", ["x", "w"], ["y"], **attrs)],
                       [("x", F32, [1, 2, 5, 5])], [("y", F32, None)],
                       {"w": w(2, 3, 2, 2)}, 13, check=False)
    proc = compile_model(save_model(model, tmp_path / "m.onnx"),
                         tmp_path / "m.ingot", check=False)
    assert_clean_failure(proc)
    assert message in proc.stderr, proc.stderr


def test_one_hot_run_time_depth_below_1_fails_the_run(tmp_path):
    model = make_model([node("OneHot", ["i", "d", "v"], ["y"], axis=-1)],
                       [("i", I64, [3]), ("d", I64, [])],
                       [("y", F32, [3, "depth"])],
                       {"v": np.array([0, 1], F32)}, opset=13, check=False)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    feed = {"i": np.array([0, 1, 2], I64), "d": np.array(0, I64)}
    proc = run_model(artifact, feed, tmp_path, check=False)
    assert proc.returncode == 1 and "depth 0 is not positive" in proc.stderr, \
        proc.stderr
