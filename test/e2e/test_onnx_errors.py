"""`ingot compile` on malformed ONNX models: each defect must end in exit
code 1 with a message naming the node (name, op type, opset), the tensor or
the value, and what was expected, and must leave no artifact behind.

Where onnxruntime refuses the same model the test says so, so the two stay
in step; where it accepts one (no outputs, a nonsense IR version, a wrong
output shape, a duplicated initializer, an out-of-range constant index it
only meets at run time) ingot is stricter on purpose: a compiled artifact
must not carry the defect to run time or into a silent wrong answer.

The models are built with onnx.helper and not run through onnx.checker,
which would refuse most of them before ingot sees them.
"""
import json
import re

import numpy as np
import onnx
import onnx.defs
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

from ingot_testlib import (SOURCE_DIR, assert_clean_failure, assert_close,
                           compile_model, describe, ingot, ort_run,
                           run_model, save_model)

F = TensorProto.FLOAT
I64 = TensorProto.INT64
ATTRIBUTE_TABLE = SOURCE_DIR / "compiler" / "onnx" / "OnnxAttributeSchema.cpp"


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def model(nodes, inputs, outputs, inits=(), opset=17, ir=8):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, ir_version=ir, producer_name="ingot-e2e",
                             opset_imports=[helper.make_opsetid("", opset)])


def relu_model(**kwargs):
    return model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                 [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], **kwargs)


def ort_refuses(m):
    try:
        ort.InferenceSession(m.SerializeToString(),
                             providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - any refusal will do
        return True
    return False


def expect_compile_error(m, tmp_path, *needles, absent=()):
    """Compile fails with exit 1, writes nothing, and the message (with the
    model's path taken out: temp paths hold any digits) names each needle
    (a str, case-insensitive, numbers standing alone; or a regex)."""
    path = save_model(m, tmp_path / "m.onnx")
    out = tmp_path / "out.ingot"
    proc = ingot("compile", path, "-o", out)
    assert_clean_failure(proc)
    assert not out.exists(), "a failed compile left an artifact behind"
    text = proc.stderr.replace(str(path), "<model>")
    for needle in needles:
        if isinstance(needle, str):
            needle = re.compile(
                (r"(?<![\d-])" + re.escape(needle) + r"(?!\d)")
                if re.fullmatch(r"-?\d+", needle) else re.escape(needle),
                re.IGNORECASE)
        assert needle.search(text), (
            f"stderr should mention {needle.pattern!r}\n" + describe(proc))
    for word in absent:
        assert word not in text, (
            f"stderr should not blame {word!r}\n" + describe(proc))
    return text


# -- 1. Attributes ------------------------------------------------------------
def test_misspelt_attribute_is_refused(tmp_path):
    m = model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axs=0)],
              [vi("x", F, [2, 3])], [vi("y", F, [2, 3])])
    assert ort_refuses(m)
    expect_compile_error(m, tmp_path, "'sm'", "Softmax", "opset 17",
                         "unknown attribute 'axs'", "has: axis")


def test_attribute_of_an_op_without_attributes_is_refused(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r", alpha=0.1)],
              [vi("x", F, [2, 3])], [vi("y", F, [2, 3])])
    assert ort_refuses(m)
    expect_compile_error(m, tmp_path, "'r'", "Relu", "attribute 'alpha'",
                         "Relu has no attributes")


def test_attribute_of_a_later_opset_is_refused(tmp_path):
    # Split's num_outputs exists from opset 18 only.
    m = model([helper.make_node("Split", ["x"], ["a", "b"], name="split",
                                axis=1, num_outputs=2)],
              [vi("x", F, [2, 4])], [vi("a", F, [2, 2]), vi("b", F, [2, 2])],
              opset=17)
    assert ort_refuses(m)
    expect_compile_error(m, tmp_path, "'split'", "Split", "opset 17",
                         "'num_outputs'")


def test_attribute_given_twice_is_refused(tmp_path):
    sm = helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=0)
    sm.attribute.append(helper.make_attribute("axis", 1))
    m = model([sm], [vi("x", F, [2, 3])], [vi("y", F, [2, 3])])
    expect_compile_error(m, tmp_path, "'sm'", "attribute 'axis'", "twice")


def test_schema_attributes_a_converter_ignores_are_accepted(tmp_path):
    """Dropout's seed, BatchNormalization's momentum and Cast's saturate at
    its default do not change what inference computes: the model compiles
    and agrees with onnxruntime."""
    stats = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
             (("s", [1, 2, 3]), ("b", [0, 1, 0]), ("mu", [0.5, 0, 1]),
              ("var", [1, 4, 0.25]))]
    m = model([helper.make_node("Dropout", ["x"], ["d"], name="drop", seed=7),
               helper.make_node("BatchNormalization", ["d", "s", "b", "mu",
                                                       "var"], ["n"],
                                name="bn", momentum=0.5),
               helper.make_node("Cast", ["n"], ["y"], name="cast",
                                to=TensorProto.INT64, saturate=1)],
              [vi("x", F, [2, 3])], [vi("y", I64, [2, 3])], stats,
              opset=19, ir=9)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(m, tmp_path / "m.onnx"), artifact)
    feed = {"x": np.array([[1.5, -2.5, 3], [4, 0, -6]], np.float32)}
    assert_close(run_model(artifact, feed, tmp_path)["y"],
                 ort_run(m, feed)["y"])


def test_cast_saturate_off_is_refused(tmp_path):
    """saturate concerns float8 targets only; onnxruntime refuses it on any
    other cast, and so does ingot."""
    m = model([helper.make_node("Cast", ["x"], ["y"], name="cast",
                                to=TensorProto.INT64, saturate=0)],
              [vi("x", F, [2, 3])], [vi("y", I64, [2, 3])], opset=19, ir=9)
    assert ort_refuses(m)
    expect_compile_error(m, tmp_path, "'cast'", "Cast", "opset 19",
                         "saturate 0", "float8")


def schema_attributes(op, domain, opset):
    """The attribute names of the schema in force at `opset`: onnx.defs, or
    onnxruntime's own schemas for the ops only it defines."""
    try:
        return sorted(onnx.defs.get_schema(op, opset, "").attributes)
    except onnx.defs.SchemaError:
        pass
    found = [s for s in ort_c.get_all_operator_schema() if s.name == op]
    assert found, f"no onnx or onnxruntime schema for {op}"
    same = [s for s in found if s.domain == domain] or found
    return sorted(max(same, key=lambda s: s.since_version).attributes)


def expected_attribute_rows():
    """(op, domain, first opset, last opset, names) per run of opsets of
    each registered op whose schema has the same attributes."""
    proc = ingot("compile", "--list-onnx-ops")
    assert proc.returncode == 0, describe(proc)
    rows = []
    for e in json.loads(proc.stdout):
        for opset in range(e["min_opset"], e["max_opset"] + 1):
            names = " ".join(schema_attributes(e["op"], e["domain"], opset))
            if rows and rows[-1][:2] == [e["op"], e["domain"]] and \
                    rows[-1][4] == names:
                rows[-1][3] = opset
            else:
                rows.append([e["op"], e["domain"], opset, opset, names])
    return [tuple(r) for r in rows]


def table_rows():
    """The rows of kAttributeRows, with split string literals joined."""
    text = ATTRIBUTE_TABLE.read_text()
    start = text.index("kAttributeRows[] = {")
    body = text[start:text.index("};", start)]
    row = re.compile(r'\{"(\w+)", "([\w.]*)", (\d+), (\d+),\s*'
                     r'((?:"[^"]*"\s*)+)\}')
    return [(op, dom, int(lo), int(hi),
             "".join(re.findall(r'"([^"]*)"', names)))
            for op, dom, lo, hi, names in row.findall(body)]


def test_attribute_table_matches_the_schemas():
    """Every registered op has rows, and they are the attribute names of
    its schemas over its opsets (regenerate from the printed rows)."""
    want = expected_attribute_rows()
    have = table_rows()
    assert have == want, (
        f"{ATTRIBUTE_TABLE.name}: kAttributeRows is not what the installed "
        "onnx/onnxruntime schemas say for the registry; the rows should be:\n"
        + "\n".join(f'    {{"{o}", "{d}", {lo}, {hi}, "{n}"}},'
                    for o, d, lo, hi, n in want))


# -- 2. Outputs ---------------------------------------------------------------
def test_graph_without_outputs_is_refused(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")],
              [vi("x", F, [2, 3])], [])
    expect_compile_error(m, tmp_path, "graph 'g' declares no outputs")


# -- 3. IR version ------------------------------------------------------------
@pytest.mark.parametrize("ir", [0, -1, 2, onnx.IR_VERSION + 1, 10**6])
def test_nonsense_ir_version_is_refused(ir, tmp_path):
    expect_compile_error(relu_model(ir=ir), tmp_path, f"ir_version {ir}",
                         "supported: 3–14")


@pytest.mark.parametrize("ir", [3, onnx.IR_VERSION])
def test_ir_versions_onnx_writes_are_accepted(ir, tmp_path):
    proc = compile_model(save_model(relu_model(ir=ir), tmp_path / "m.onnx"),
                         tmp_path / "m.ingot")
    assert proc.returncode == 0


# -- 4. Declared output types -------------------------------------------------
def test_output_declared_with_another_dtype_is_refused(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")],
              [vi("x", F, [2, 3])], [vi("y", I64, [2, 3])])
    assert ort_refuses(m)
    expect_compile_error(m, tmp_path, "graph output 'y'", "declared as int64",
                         "computes float32")


@pytest.mark.parametrize("declared,shown", [([2, 4], "[2, 4]"),
                                            ([6], "[6]"),
                                            (["n", 4], "[n, 4]")])
def test_output_declared_with_another_shape_is_refused(declared, shown,
                                                       tmp_path):
    # onnxruntime only warns ("Falling back to lenient merge").
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")],
              [vi("x", F, [2, 3])], [vi("y", F, declared)])
    expect_compile_error(m, tmp_path, "graph output 'y'",
                         f"with shape {shown}", "computes [2, 3]")


def test_symbolic_output_dims_are_not_refused(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")],
              [vi("x", F, ["n", 3])], [vi("y", F, ["batch", 3])])
    compile_model(save_model(m, tmp_path / "m.onnx"), tmp_path / "m.ingot")


# -- 5. A graph input that is also an initializer -----------------------------
def shadow_model(declared_shape=(3,)):
    """y = x + w, where w is both a graph input and an initializer."""
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                 [vi("x", F, [3]), vi("w", F, list(declared_shape))],
                 [vi("y", F, [3])],
                 [numpy_helper.from_array(np.array([1, 2, 3], np.float32),
                                          "w")])


def test_input_shadowing_an_initializer_keeps_its_default(tmp_path):
    """Deliberate: ONNX (IR >= 4) makes such an input overridable with the
    initializer as its default; ingot has no optional inputs, so it compiles
    the default in as a weight (what onnxruntime computes when w is not fed)
    and `ingot run` refuses a value for w as an unknown input, rather than
    ignoring it."""
    m = shadow_model()
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(m, tmp_path / "m.onnx"), artifact)
    feed = {"x": np.array([0.5, -1, 4], np.float32)}
    assert_close(run_model(artifact, feed, tmp_path)["y"],
                 ort_run(m, feed)["y"])
    override = dict(feed, w=np.full(3, 5, np.float32))
    proc = run_model(artifact, override, tmp_path, check=False)
    assert_clean_failure(proc)
    assert "unknown input 'w'" in proc.stderr, describe(proc)


def test_input_shadowing_an_initializer_must_agree_with_it(tmp_path):
    expect_compile_error(shadow_model(declared_shape=(4,)), tmp_path,
                         "graph input 'w'", "also an initializer",
                         "shape [4]", "initializer is [3]")


# -- 6. Names defined twice ---------------------------------------------------
def test_duplicated_graph_input_is_refused(tmp_path):
    m = model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
              [vi("x", F, [3]), vi("x", F, [3])], [vi("y", F, [3])])
    assert ort_refuses(m)
    expect_compile_error(m, tmp_path, "graph input 'x' is declared twice")


def test_value_defined_by_two_nodes_is_refused(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="first"),
               helper.make_node("Neg", ["x"], ["y"], name="second")],
              [vi("x", F, [3])], [vi("y", F, [3])])
    assert ort_refuses(m)
    expect_compile_error(m, tmp_path, "value 'y' is defined twice",
                         "node 'first' (Relu)", "node 'second' (Neg)")


def test_node_output_redefining_a_graph_input_is_refused(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["x"], name="loop")],
              [vi("x", F, [3])], [vi("x", F, [3])])
    assert ort_refuses(m)
    expect_compile_error(m, tmp_path, "value 'x' is defined twice",
                         "a graph input", "node 'loop' (Relu)")


def test_duplicated_initializer_is_refused(tmp_path):
    # onnxruntime warns and keeps the last one.
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
              [vi("x", F, [3])], [vi("y", F, [3])],
              [numpy_helper.from_array(np.ones(3, np.float32), "w"),
               numpy_helper.from_array(np.zeros(3, np.float32), "w")])
    expect_compile_error(m, tmp_path, "initializer 'w' is given twice")


# -- 7. Out-of-range constant Gather indices ----------------------------------
def test_gather_of_a_shape_names_the_gather_not_a_later_node(tmp_path):
    """Index 5 of a rank-2 shape used to leave the shape unknown and a
    later ConstantOfShape blamed for "run-time data"."""
    m = model([helper.make_node("Shape", ["x"], ["s"], name="shape"),
               helper.make_node("Gather", ["s", "idx"], ["g"],
                                name="gather_bad", axis=0),
               helper.make_node("Concat", ["g", "one"], ["c"],
                                name="concat", axis=0),
               helper.make_node("ConstantOfShape", ["c"], ["y"],
                                name="fill")],
              [vi("x", F, [2, 3])], [vi("y", F, None)],
              [i64("idx", [5]), i64("one", [1])])
    expect_compile_error(m, tmp_path, "'gather_bad'", "Gather", "opset 17",
                         "index 5", "axis 0 of size 2", "[-2, 1]",
                         absent=("concat", "fill"))


@pytest.mark.parametrize("index", [3, -4])
def test_gather_of_data_names_index_axis_and_size(index, tmp_path):
    m = model([helper.make_node("Gather", ["x", "idx"], ["g"],
                                name="gather_bad", axis=1),
               helper.make_node("Concat", ["g", "g"], ["y"], name="concat",
                                axis=0)],
              [vi("x", F, [2, 3])], [vi("y", F, None)],
              [i64("idx", [0, index])])
    expect_compile_error(m, tmp_path, "'gather_bad'", f"index {index}",
                         "axis 1 of size 3", absent=("concat",))


def test_gather_with_in_range_negative_index_still_compiles(tmp_path):
    m = model([helper.make_node("Gather", ["x", "idx"], ["y"],
                                name="gather_ok", axis=1)],
              [vi("x", F, [2, 3])], [vi("y", F, [2, 2])],
              [i64("idx", [-3, 2])])
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(m, tmp_path / "m.onnx"), artifact)
    feed = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    assert_close(run_model(artifact, feed, tmp_path)["y"],
                 ort_run(m, feed)["y"])
