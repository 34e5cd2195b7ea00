"""NonMaxSuppression (docs/kernels-tensor.md) compiled by ingot and compared
with onnxruntime, row for row: the selected (batch, class, box) indices are
integers, so they must match exactly, order included.

The boxes are drawn so that many overlap (centres in a 10x10 square, sides
1 to 4) and corners are often given in reversed order; scores are rounded
to one decimal so that equal scores are common, which exercises the
tie-break (lower box index first). Shared helpers in ops_case_lib.py.
"""
import numpy as np
import pytest

from ingot_testlib import Model, assert_close, make_model, node
from ops_case_lib import F32, I64, compile_error, results_fixture, run_error

CASES = []


def corner_boxes(r, dims):
    b, n, _ = dims
    centre = r.uniform(0, 10, (b, n, 2))
    half = r.uniform(0.5, 2, (b, n, 2))
    y1x1, y2x2 = centre - half, centre + half
    flip = r.random((b, n, 1)) < 0.3  # corners given the other way round
    return np.where(flip, np.concatenate([y2x2, y1x1], -1),
                    np.concatenate([y1x1, y2x2], -1)).astype(F32)


def centre_boxes(r, dims):
    b, n, _ = dims
    return np.concatenate([r.uniform(0, 10, (b, n, 2)),
                           r.uniform(1, 4, (b, n, 2))], -1).astype(F32)


def tied_scores(r, dims):
    return np.round(r.uniform(0, 1, dims), 1).astype(F32)


def nms_case(key, batches, classes, n, centred, max_out, iou, score,
             sizes=({},), run_time=False):
    """max_out/iou/score None: that optional input is left out. run_time:
    the given ones are graph inputs (fed those values) instead of
    initializers, so ingot reads them at run time."""
    inits, names, scalar_inputs, gen = {}, ["boxes", "scores"], [], {}
    for name, value, dtype in (("max_out", max_out, I64), ("iou", iou, F32),
                               ("score", score, F32)):
        if value is None:
            names.append("")
            continue
        names.append(name)
        if run_time:
            scalar_inputs.append((name, dtype, [1]))
            gen[name] = lambda r, d, v=value, t=dtype: np.array([v], t)
        else:
            inits[name] = np.array([value], dtype)
    while names[-1] == "":
        names.pop()
    gen.update(boxes=centre_boxes if centred else corner_boxes,
               scores=tied_scores)
    model = Model(f"nms_{key}",
                  [node("NonMaxSuppression", names, ["y"],
                        center_point_box=int(centred))],
                  [("boxes", F32, [batches, n, 4]),
                   ("scores", F32, [batches, classes, n])] + scalar_inputs,
                  ["y"], inits, 11, sizes, gen)
    CASES.append(pytest.param(model, id=model.key))


nms_case("corners", 2, 3, 20, False, 5, 0.5, 0.3)
nms_case("centres_no_threshold", 1, 2, 30, True, 100, 0.3, None)
nms_case("iou_zero", 1, 1, 16, False, 16, 0.0, None)
nms_case("iou_one", 1, 2, 12, False, 4, 1.0, 0.45)
nms_case("max_zero", 2, 2, 8, False, 0, 0.5, None)
nms_case("defaults", 1, 1, 6, False, None, None, None)
nms_case("dynamic", "b", 2, "n", False, 3, 0.4, 0.2,
         ({"b": 1, "n": 9}, {"b": 2, "n": 40}))
# The scalars as graph inputs: read at run time, result bounded by B*C*N.
nms_case("run_time_scalars", 2, 3, 20, False, 4, 0.45, 0.3, run_time=True)
nms_case("run_time_negative_max", 1, 2, 10, False, -2, 0.5, None,
         run_time=True)
nms_case("run_time_dynamic", "b", 2, "n", True, 50, 0.3, None,
         ({"b": 1, "n": 7}, {"b": 2, "n": 33}), run_time=True)

results = results_fixture()


@pytest.mark.parametrize("model", CASES)
def test_non_max_suppression(model, results):
    for label, got, expected in results(model):
        assert got["y"].shape == expected["y"].shape, label
        assert_close(got["y"], expected["y"], what=f"y ({label})")


def test_run_time_iou_out_of_range_refused(tmp_path):
    # onnxruntime refuses it too; ingot names the node and the value.
    model = make_model([node("NonMaxSuppression",
                              ["boxes", "scores", "m", "iou"], ["y"],
                              name="nms")],
                       [("boxes", F32, [1, 4, 4]), ("scores", F32, [1, 1, 4]),
                        ("iou", F32, [1])],
                       [("y", I64, [None, 3])], {"m": np.array([2], I64)},
                       opset=11)
    r = np.random.default_rng(5)
    err = run_error(tmp_path, model,
                    {"boxes": corner_boxes(r, (1, 4, 4)),
                     "scores": tied_scores(r, (1, 1, 4)),
                     "iou": np.array([1.5], F32)})
    for part in ("nms", "iou_threshold must be in [0, 1]", "1.5"):
        assert part in err, err


def test_bad_box_shape_rejected(tmp_path):
    model = make_model([node("NonMaxSuppression", ["boxes", "scores"], ["y"],
                             name="nms")],
                       [("boxes", F32, [1, 4, 3]), ("scores", F32, [1, 1, 4])],
                       [("y", I64, [None, 3])], opset=11, check=False)
    err = compile_error(tmp_path, model)
    for part in ("node 'nms'", "NonMaxSuppression", "[B, N, 4]"):
        assert part in err, err
