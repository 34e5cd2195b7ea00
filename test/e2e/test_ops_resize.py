"""Resize and Upsample compiled by ingot and compared with onnxruntime:
nearest, linear and cubic in every coordinate mode, tf_crop_and_resize's
roi, antialias, keep_aspect_ratio_policy and scales from a Constant (the
rest of the spatial ops are in test_ops_spatial.py; shared helpers in
ops_case_lib.py). f32 within the shared relative tolerance.

Each case is a one-node model; scales, sizes and roi are initializers
unless a case is about run-time values.
"""
import numpy as np
import pytest
from onnx import helper

from ingot_testlib import Model, make_model, node
from ops_case_lib import (check_case,
                          F32, compile_error, f32, i64, one, results_fixture,
                          signed)

CASES, KEYS = [], {}


def case(model):
    assert KEYS.setdefault(model.key, model) is model, f"dup key {model.key}"
    CASES.append(pytest.param(model, id=model.key))


# -- Resize -------------------------------------------------------------------
for key, xs, scales, sizes_in, attrs in [
        ("nearest_x2", [1, 2, 3, 4], [1, 1, 2, 2], None,
         {"coordinate_transformation_mode": "asymmetric",
          "nearest_mode": "floor"}),
        ("nearest_default_x1_5", [1, 1, 4, 4], [1, 1, 1.5, 1.5], None, {}),
        # Integer factors on the last two dims: each input row expanded
        # once; a factor on an outer dim takes the general path.
        ("nearest_x3x2", [2, 3, 5, 7], [1, 1, 3, 2], None,
         {"coordinate_transformation_mode": "asymmetric",
          "nearest_mode": "floor"}),
        ("nearest_x1x3_default", [1, 2, 4, 5], [1, 1, 1, 3], None, {}),
        ("nearest_x2_channels", [1, 2, 3, 4], [1, 2, 2, 2], None,
         {"coordinate_transformation_mode": "asymmetric",
          "nearest_mode": "floor"}),
        ("nearest_half_pixel_ceil_down", [1, 2, 6, 6], [1, 1, 0.5, 0.75],
         None, {"nearest_mode": "ceil"}),
        ("nearest_align_prefer_ceil", [1, 1, 3, 5], None, [1, 1, 7, 4],
         {"coordinate_transformation_mode": "align_corners",
          "nearest_mode": "round_prefer_ceil"}),
        ("linear_half_pixel", [1, 2, 4, 4], [1, 1, 2, 2], None,
         {"mode": "linear"}),
        ("linear_align_sizes", [2, 1, 3, 5], None, [2, 1, 6, 4],
         {"mode": "linear", "coordinate_transformation_mode": "align_corners"}),
        ("linear_asym_down", [1, 3, 8, 6], [1, 1, 0.5, 0.5], None,
         {"mode": "linear", "coordinate_transformation_mode": "asymmetric"}),
        ("linear_pytorch_half", [1, 1, 5, 3], None, [1, 1, 1, 6],
         {"mode": "linear",
          "coordinate_transformation_mode": "pytorch_half_pixel"})]:
    args = [("x", F32, xs), ""]
    if scales is not None:
        args.append(("s", np.array(scales, F32)))
    else:
        args += ["", ("z", i64(*sizes_in))]
    case(one(f"resize_{key}", "Resize", args, opset=13, **attrs))
# Upsample (opsets 7-9): scales as an attribute (7) or an input (9).
for key, xs, scales, mode, opset in [
        ("nearest_x2_opset9", [1, 2, 3, 4], [1, 1, 2, 2], "nearest", 9),
        ("nearest_x1_5_3_opset7", [1, 1, 4, 3], [1, 1, 1.5, 3], "nearest", 7),
        ("linear_x2_opset9", [2, 1, 3, 5], [1, 1, 2, 2], "linear", 9),
        ("linear_x3_opset7", [1, 1, 2, 6], [1, 1, 3, 1.5], "linear", 7)]:
    if opset == 9:
        case(one(f"upsample_{key}", "Upsample",
                 [("x", F32, xs), ("s", np.array(scales, F32))], opset=opset,
                 mode=mode))
    else:
        case(one(f"upsample_{key}", "Upsample", [("x", F32, xs)],
                 opset=opset, mode=mode, scales=scales))
# Cubic (bicubic upsampling as torch exports it; Keys' kernel), including
# a 2-D input (onnxruntime takes cubic on 2-D, or 4-D resizing H and W),
# another coefficient and exclude_outside.
for key, xs, scales, sizes_in, attrs in [
        ("up_half_pixel", [1, 2, 5, 4], [1, 1, 2, 1.5], None, {}),
        ("down_align", [1, 1, 9, 7], None, [1, 1, 4, 5],
         {"coordinate_transformation_mode": "align_corners"}),
        ("asym_a05_exclude", [1, 2, 4, 6], [1, 1, 1.75, 0.6], None,
         {"coordinate_transformation_mode": "asymmetric",
          "cubic_coeff_a": -0.5, "exclude_outside": 1}),
        ("two_d", [7, 5], [1.5, 0.6], None,
         {"coordinate_transformation_mode": "pytorch_half_pixel"})]:
    args = [("x", F32, xs), ""]
    if scales is not None:
        args.append(("s", np.array(scales, F32)))
    else:
        args += ["", ("z", i64(*sizes_in))]
    case(one(f"resize_cubic_{key}", "Resize", args, opset=13, mode="cubic",
             gen={"x": signed}, **attrs))
case(one("resize_linear_half_pixel_symmetric", "Resize",
         [("x", F32, [1, 1, 4, 5]), "", ("s", f32(1, 1, 0.6, 1.7))],
         opset=19, mode="linear",
         coordinate_transformation_mode="half_pixel_symmetric"))
for policy in ("not_larger", "not_smaller"):
    case(one(f"resize_keep_aspect_{policy}", "Resize",
             [("x", F32, [1, 2, 4, 6]), "", "", ("z", i64(7, 5))], opset=18,
             axes=[2, 3], keep_aspect_ratio_policy=policy))
# tf_crop_and_resize: the roi (starts then ends, fractions of the input)
# crops before resizing; outputs mapped outside the input take
# extrapolation_value. Linear, nearest and cubic; a roi reaching past the
# input; one fed at run time; one for some axes only (opset 18).
for key, mode, xs, sizes_in, roi, extra in [
        ("linear", "linear", [1, 2, 6, 5], [1, 2, 4, 7],
         [0, 0, 0.2, 0.1, 1, 1, 0.8, 0.9], {}),
        ("nearest_past_edge", "nearest", [1, 1, 5, 6], [1, 1, 6, 4],
         [0, 0, -0.2, 0.3, 1, 1, 1.25, 0.7], {"extrapolation_value": 2.5}),
        ("cubic", "cubic", [1, 1, 7, 6], [1, 1, 5, 5],
         [0, 0, 0.1, -0.1, 1, 1, 0.9, 1.2], {"extrapolation_value": -1.0})]:
    case(one(f"resize_crop_{key}", "Resize",
             [("x", F32, xs), ("r", np.array(roi, F32)), "",
              ("z", i64(*sizes_in))], opset=13, mode=mode,
             coordinate_transformation_mode="tf_crop_and_resize",
             gen={"x": signed}, **extra))
case(one("resize_crop_run_time_roi", "Resize",
         [("x", F32, [1, 2, 5, 5]), ("r", F32, [8]), "",
          ("z", i64(1, 2, 3, 6))], opset=13, mode="linear",
         coordinate_transformation_mode="tf_crop_and_resize",
         extrapolation_value=0.5,
         gen={"x": signed,
              "r": lambda r, s: np.concatenate(
                  [[0, 0], r.uniform(-0.2, 0.4, 2), [1, 1],
                   r.uniform(0.6, 1.2, 2)]).astype(F32)}))
case(one("resize_crop_axes", "Resize",
         [("x", F32, [2, 3, 6, 4]), ("r", f32(0.25, 0.1, 0.75, 1.1)), "",
          ("z", i64(5, 3))], opset=18, mode="linear", axes=[3, 2],
         coordinate_transformation_mode="tf_crop_and_resize"))
# antialias (18+): downsampling widens the filter by 1 / scale, weights
# normalised; upsampling keeps the plain filter. Linear and cubic, by
# scales and by sizes, exclude_outside, a 3-D input.
for key, mode, xs, scales, sizes_in, extra in [
        ("linear_scales", "linear", [1, 2, 9, 11], [1, 1, 0.45, 0.6], None,
         {}),
        ("linear_sizes_up_down", "linear", [1, 1, 7, 5], None, [1, 1, 3, 8],
         {"coordinate_transformation_mode": "align_corners"}),
        ("cubic_scales", "cubic", [1, 2, 12, 10], [1, 1, 0.25, 0.75], None,
         {}),
        ("cubic_sizes_exclude", "cubic", [1, 1, 10, 9], None, [1, 1, 4, 3],
         {"exclude_outside": 1, "cubic_coeff_a": -0.5}),
        ("linear_3d", "linear", [2, 13, 6], [1, 0.35, 1], None, {})]:
    args = [("x", F32, xs), ""]
    if scales is not None:
        args.append(("s", np.array(scales, F32)))
    else:
        args += ["", ("z", i64(*sizes_in))]
    case(one(f"resize_antialias_{key}", "Resize", args, opset=18, mode=mode,
             antialias=1, gen={"x": signed}, **extra))
# Scales from a Constant node.
case(Model("resize_constant_scales", [
    node("Constant", [], ["s"], value=helper.make_tensor(
        "s", 1, [4], [1.0, 1.0, 2.0, 3.0])),
    node("Resize", ["x", "", "s"], ["y"], mode="linear")],
    [("x", F32, [1, 1, 3, 2])], ["y"], {}, 13))


results = results_fixture()


@pytest.mark.parametrize("model", CASES)
def test_op(model, results):
    check_case(results, model)


def test_resize_antialias_with_nearest_is_refused(tmp_path):
    """onnx's reference refuses antialias on nearest; so does ingot, naming
    the node and what it supports."""
    model = one("bad", "Resize", [("x", F32, [1, 1, 4, 4]), "",
                                  ("s", f32(1, 1, 0.5, 0.5))],
                opset=18, mode="nearest", antialias=1)
    err = compile_error(tmp_path, make_model(model.nodes, model.inputs,
                                             [("y", F32, [1, 1, 2, 2])],
                                             model.inits, opset=18,
                                             check=False))
    assert "antialias with mode 'nearest'" in err and "linear or cubic" in err, \
        err
