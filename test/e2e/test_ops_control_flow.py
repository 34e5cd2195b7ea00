"""ONNX If. A condition the importer can evaluate (shape arithmetic,
constants) replaces the If by its branch; one known only at run time
compiles both branches into the plan and runs one (skip steps, copies into
the result buffers). Each case compiles once and runs every condition,
compared with onnxruntime on fresh random data.
"""
import numpy as np
from onnx import TensorProto, helper

from ingot_testlib import (assert_clean_failure, check_against_ort,
                           compile_model, ingot, make_model, node, run_model,
                           save_model, seed_for)

F32, I64 = np.float32, np.int64


def rng_for(request):
    return np.random.default_rng(seed_for(request.node.nodeid))


def branch(name, nodes, outputs, initializers=()):
    """A subgraph without inputs; outputs are names (types left open, as
    exporters often write them)."""
    return helper.make_graph(
        nodes, name, [],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
         for o in outputs],
        initializer=[helper.make_tensor(n, TensorProto.INT64, [len(v)], v)
                     for n, v in initializers])


def if_node(cond, outputs, then_graph, else_graph, name="if"):
    return helper.make_node("If", [cond], outputs, name=name,
                            then_branch=then_graph, else_branch=else_graph)


def test_run_time_condition_with_branches_of_different_shapes(tmp_path,
                                                              request):
    """Then: relu(x)·x, [3, 4]; else: the first two rows, [2, 4] (the
    branch's own initializers). The result's rows are set at run time and
    what follows reads whichever branch ran."""
    rng = rng_for(request)
    then_g = branch("then", [node("Relu", ["x"], ["t1"]),
                             node("Mul", ["t1", "x"], ["t2"])], ["t2"])
    else_g = branch("else", [node("Slice", ["x", "s", "e"], ["e1"])], ["e1"],
                    [("s", [0]), ("e", [2])])
    model = make_model([if_node("c", ["r"], then_g, else_g),
                        node("Neg", ["r"], ["y"])],
                       [("x", F32, [3, 4]), ("c", np.bool_, [])],
                       [("y", F32, [None, 4])], {}, 17, check=False)
    sets = [{"x": rng.standard_normal((3, 4)).astype(F32),
             "c": np.array(c)} for c in (True, False, True)]
    check_against_ort(model, sets, tmp_path)


def test_nested_run_time_ifs_and_two_results(tmp_path, request):
    """An If inside a branch, on a second run-time condition; each branch
    yields two values, one of them an outer value (through Identity, which
    onnxruntime requires there)."""
    rng = rng_for(request)
    inner = if_node("d", ["i"],
                    branch("inner_then", [node("Exp", ["x"], ["ie"])],
                           ["ie"]),
                    branch("inner_else", [node("Abs", ["x"], ["ia"])],
                           ["ia"]), name="inner")
    then_g = branch("then", [inner, node("Add", ["i", "z"], ["ts"]),
                             node("Identity", ["z"], ["tz"])], ["ts", "tz"])
    else_g = branch("else", [node("Sub", ["x", "z"], ["es"]),
                             node("Identity", ["x"], ["ex"])], ["es", "ex"])
    model = make_model([if_node("c", ["a", "b"], then_g, else_g)],
                       [("x", F32, [2, 5]), ("z", F32, [2, 5]),
                        ("c", np.bool_, []), ("d", np.bool_, [1])],
                       [("a", F32, [2, 5]), ("b", F32, [2, 5])], {}, 17,
                       check=False)
    sets = [{"x": rng.standard_normal((2, 5)).astype(F32),
             "z": rng.standard_normal((2, 5)).astype(F32),
             "c": np.array(c), "d": np.array([d])}
            for c in (True, False) for d in (True, False)]
    check_against_ort(model, sets, tmp_path)


def test_condition_known_at_compile_time_is_folded(tmp_path, request):
    """rank(x) != 3, as exporters guard a squeeze: the If becomes its
    else branch, whose squeeze would not even type-check in the other."""
    rng = rng_for(request)
    then_g = branch("then", [node("Identity", ["x"], ["t"])], ["t"])
    else_g = branch("else", [node("Squeeze", ["x", "ax"], ["e"])], ["e"],
                    [("ax", [0])])
    nodes = [node("Shape", ["x"], ["s"]), node("Size", ["s"], ["n"]),
             node("Constant", [], ["k"],
                  value=helper.make_tensor("k", TensorProto.INT64, [], [3])),
             node("Equal", ["n", "k"], ["eq"]), node("Not", ["eq"], ["c"]),
             if_node("c", ["y"], then_g, else_g)]
    model = make_model(nodes, [("x", F32, [1, 4, 6])], [("y", F32, [4, 6])],
                       {}, 15, check=False)
    check_against_ort(model, [{"x": rng.standard_normal((1, 4, 6))
                               .astype(F32)}], tmp_path)
    graph = ingot("compile", tmp_path / "model.onnx", "-o",
                  tmp_path / "g.ingot", "--compile-to=graph")
    assert graph.returncode == 0, graph.stderr
    assert "ingot.if" not in graph.stdout, graph.stdout


def test_branch_that_cannot_run_at_the_compiled_shapes(tmp_path, request):
    """The else branch reshapes 12 elements to [5, -1], which no input of
    the compiled shape allows: the compiler warns, the then branch runs,
    and a run taking the else branch fails naming the node."""
    rng = rng_for(request)
    then_g = branch("then", [node("Relu", ["x"], ["t"])], ["t"])
    bad = branch("else", [node("Reshape", ["x", "bad"], ["e"],
                               name="bad_reshape")], ["e"],
                 [("bad", [5, -1])])
    model = make_model([if_node("c", ["y"], then_g, bad)],
                       [("x", F32, [3, 4]), ("c", np.bool_, [])],
                       [("y", F32, [None, None])], {}, 17, check=False)
    path = save_model(model, tmp_path / "model.onnx")
    proc = compile_model(path, tmp_path / "m.ingot")
    assert "cannot run at the compiled shapes" in proc.stderr, proc.stderr
    x = rng.standard_normal((3, 4)).astype(F32)
    got = run_model(tmp_path / "m.ingot", {"x": x, "c": np.array(True)},
                    tmp_path)
    np.testing.assert_array_equal(got["y"], np.maximum(x, 0))
    fail = run_model(tmp_path / "m.ingot", {"x": x, "c": np.array(False)},
                     tmp_path, check=False)
    assert_clean_failure(fail)
    assert "bad_reshape" in fail.stderr, fail.stderr
    assert "cannot run at the compiled input shapes" in fail.stderr


def test_branches_of_different_rank_need_a_known_condition(tmp_path):
    """A squeeze guarded by a run-time test cannot have one static rank:
    the error names the node and asks for --shape."""
    then_g = branch("then", [node("Squeeze", ["x", "ax"], ["t"])], ["t"],
                    [("ax", [0])])
    else_g = branch("else", [node("Identity", ["x"], ["e"])], ["e"])
    model = make_model([if_node("c", ["y"], then_g, else_g, name="guard")],
                       [("x", F32, [1, 4]), ("c", np.bool_, [])],
                       [("y", F32, None)], {}, 17, check=False)
    path = save_model(model, tmp_path / "model.onnx")
    proc = compile_model(path, tmp_path / "m.ingot", check=False)
    assert_clean_failure(proc)
    assert "node 'guard'" in proc.stderr, proc.stderr
    assert "--shape" in proc.stderr, proc.stderr
    assert not (tmp_path / "m.ingot").exists()


def test_gpu_target_refuses_a_run_time_branch(tmp_path):
    then_g = branch("then", [node("Relu", ["x"], ["t"])], ["t"])
    else_g = branch("else", [node("Neg", ["x"], ["e"])], ["e"])
    model = make_model([if_node("c", ["y"], then_g, else_g, name="pick")],
                       [("x", F32, [3, 4]), ("c", np.bool_, [])],
                       [("y", F32, [3, 4])], {}, 17, check=False)
    path = save_model(model, tmp_path / "model.onnx")
    proc = compile_model(path, tmp_path / "m.ingot", "--target", "cuda",
                         check=False)
    assert_clean_failure(proc)
    assert "run time" in proc.stderr, proc.stderr
    assert not (tmp_path / "m.ingot").exists()
