"""ONNX Loop and Scan, unrolled at compile time: a trip count and condition
the importer can evaluate (constants, shape arithmetic at pinned shapes),
a Scan over a dim of static length. Compared with onnxruntime on fresh
random data; a loop whose length is only known at run time is refused,
naming what to pin.
"""
import numpy as np
from onnx import TensorProto, helper

from ingot_testlib import (assert_clean_failure, check_against_ort, ingot,
                           make_model, node, save_model, seed_for)

F32, I64 = np.float32, np.int64


def rng_for(request):
    return np.random.default_rng(seed_for(request.node.nodeid))


def body(nodes, inputs, outputs, initializers=()):
    """A body graph: inputs and outputs as (name, onnx dtype) pairs. Shapes
    are left open as exporters often write them, except the iteration
    number and condition, which onnxruntime wants declared scalars."""
    info = helper.make_tensor_value_info
    scalar = (TensorProto.BOOL, TensorProto.INT64)
    return helper.make_graph(
        nodes, "body",
        [info(n, t, [] if t in scalar else None) for n, t in inputs],
        [info(n, t, None) for n, t in outputs], initializer=list(initializers))


def const_i64(name, values, dims=None):
    return helper.make_tensor(name, TensorProto.INT64,
                              [len(values)] if dims is None else dims, values)


def test_loop_with_trip_count_from_a_shape(tmp_path, request):
    """for i in range(x.shape[0]): acc = acc * 0.5 + x[i] * i, with each
    iteration's acc as a scan output: the trip count is shape arithmetic,
    known once x is pinned; the body reads the outer x and its own
    initializer."""
    rng = rng_for(request)
    B, F, B_ = TensorProto.BOOL, TensorProto.FLOAT, TensorProto.INT64
    loop_body = body(
        [node("Gather", ["x", "i"], ["row"], axis=0),
         node("Cast", ["i"], ["fi"], to=F),
         node("Mul", ["row", "fi"], ["scaled"]),
         node("Mul", ["acc", "half"], ["decayed"]),
         node("Add", ["decayed", "scaled"], ["acc_out"]),
         node("Identity", ["cond"], ["cond_out"]),
         node("Identity", ["acc_out"], ["scan"])],
        [("i", B_), ("cond", B), ("acc", F)],
        [("cond_out", B), ("acc_out", F), ("scan", F)],
        [helper.make_tensor("half", F, [], [0.5])])
    nodes = [node("Shape", ["x"], ["s"]),
             node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Loop", ["n", "", "acc0"], ["acc", "trace"],
                              body=loop_body)]
    model = make_model(nodes, [("x", F32, [5, 3]), ("acc0", F32, [3])],
                       [("acc", F32, [3]), ("trace", F32, [5, 3])],
                       {"zero": np.array(0, I64)}, 17, check=False)
    sets = [{"x": rng.standard_normal((5, 3)).astype(F32),
             "acc0": rng.standard_normal(3).astype(F32)}]
    check_against_ort(model, sets, tmp_path)


def test_loop_stopped_by_its_condition(tmp_path, request):
    """M = 10 but the body's condition turns false once i reaches 3 (a
    constant each iteration): four iterations, as onnxruntime runs it."""
    rng = rng_for(request)
    B, F, B_ = TensorProto.BOOL, TensorProto.FLOAT, TensorProto.INT64
    loop_body = body(
        [node("Less", ["i", "three"], ["cond_out"]),
         node("Add", ["v", "x"], ["v_out"])],
        [("i", B_), ("cond", B), ("v", F)],
        [("cond_out", B), ("v_out", F)],
        [const_i64("three", [3], [])])
    nodes = [helper.make_node("Loop", ["m", "t", "x"], ["y"],
                              body=loop_body)]
    model = make_model(nodes, [("x", F32, [2, 4])], [("y", F32, [2, 4])],
                       {"m": np.array(10, I64), "t": np.array(True)}, 13,
                       check=False)
    sets = [{"x": rng.standard_normal((2, 4)).astype(F32)}]
    check_against_ort(model, sets, tmp_path)


def test_scan_forward_and_reverse(tmp_path, request):
    """A running sum over the rows of x (axis 0) and a reversed scan over
    the columns of z (axis 1) written out along axis 1."""
    rng = rng_for(request)
    F = TensorProto.FLOAT
    scan_body = body(
        [node("Add", ["s", "r"], ["s_out"]),
         node("Mul", ["s_out", "c"], ["prod"])],
        [("s", F), ("r", F), ("c", F)],
        [("s_out", F), ("prod", F)])
    scan = helper.make_node(
        "Scan", ["s0", "x", "z"], ["s", "prods"], body=scan_body,
        num_scan_inputs=2, scan_input_axes=[0, 1],
        scan_input_directions=[0, 1], scan_output_axes=[1])
    model = make_model([scan], [("s0", F32, [4]), ("x", F32, [6, 4]),
                                ("z", F32, [4, 6])],
                       [("s", F32, [4]), ("prods", F32, [4, 6])], {}, 16,
                       check=False)
    sets = [{"s0": rng.standard_normal(4).astype(F32),
             "x": rng.standard_normal((6, 4)).astype(F32),
             "z": rng.standard_normal((4, 6)).astype(F32)}]
    check_against_ort(model, sets, tmp_path)


def test_run_time_trip_count_is_refused(tmp_path):
    """The trip count is a graph input: ingot unrolls loops, so it says
    what it needs instead of guessing."""
    B, F, B_ = TensorProto.BOOL, TensorProto.FLOAT, TensorProto.INT64
    loop_body = body([node("Identity", ["cond"], ["cond_out"]),
                      node("Neg", ["v"], ["v_out"])],
                     [("i", B_), ("cond", B), ("v", F)],
                     [("cond_out", B), ("v_out", F)])
    model = make_model([helper.make_node("Loop", ["m", "", "x"], ["y"],
                                         body=loop_body, name="the_loop")],
                       [("x", F32, [2]), ("m", I64, [])],
                       [("y", F32, [2])], {}, 13, check=False)
    path = save_model(model, tmp_path / "model.onnx")
    proc = ingot("compile", path, "-o", tmp_path / "m.ingot")
    assert_clean_failure(proc)
    assert "node 'the_loop' (Loop, opset 13): a trip count only known at " \
        "run time" in proc.stderr, proc.stderr
    assert "--shape" in proc.stderr, proc.stderr
