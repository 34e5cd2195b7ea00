"""The official ONNX node-test suite, through `ingot compile` + `ingot run`.

The `onnx` package ships one small model per op behaviour (model.onnx plus
input_*.pb / output_*.pb protobufs under onnx/backend/test/data/node/).
Measuring ingot against that suite, rather than only against tests we wrote
ourselves, is what lets us claim coverage users can rely on. This module:

  * discovers the node tests (from the shipped data directory, or, where a
    wheel was installed without it, by generating the very same cases in
    memory from onnx.backend.test.case.node, which is how onnx writes that
    directory in the first place);
  * selects every test whose ops are ALL claimed by the binary
    (`ingot compile --list-onnx-ops`: op type, domain and opset range), so
    the suite grows by itself as the importer learns new ops;
  * compiles and runs each one twice: "static" (shapes as the test gives
    them) and "dynamic" (every graph-input dim turned into its own
    dim_param, as onnx-mlir runs the suite; bounds: see dynamic_bound),
    because static shapes hide the shape-inference and runtime-shape bugs
    that real exported models hit;
  * compares with the expected outputs at the suite's own tolerances;
  * checks the results against an explicit expected-failure list
    (onnx_node_suite_xfail.txt), strictly both ways.

Run it directly to see the numbers or to regenerate the list:
    python test/e2e/onnx_node_suite.py [--json results.json] [--write-xfail]
test_onnx_node_suite.py runs it under ctest; scripts/gen_supported_ops.py
turns a --json result file into docs/supported-ops.md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

SOURCE_DIR = Path(os.environ.get("INGOT_SOURCE_DIR",
                                 Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("INGOT_BUILD_DIR", SOURCE_DIR / "build"))
XFAIL_FILE = Path(__file__).resolve().with_name("onnx_node_suite_xfail.txt")

# The tolerances onnx's own backend runner applies to node tests
# (onnx.backend.test.case.node.expect records rtol=1e-3, atol=1e-7 for every
# case); integers, bools and strings must match exactly.
RTOL = 1e-3
ATOL = 1e-7

# Two workers: the suite must not starve the other ctest jobs on a 2-core
# machine, and each compile is single-threaded anyway.
WORKERS = 2
COMPILE_TIMEOUT_S = 120
RUN_TIMEOUT_S = 60


STATIC, DYNAMIC = "static", "dynamic"
VARIANTS = (STATIC, DYNAMIC)
DEFAULT_DOMAINS = ("", "ai.onnx")


# -----------------------------------------------------------------------------
# Discovering the node tests
# -----------------------------------------------------------------------------

@dataclass
class NodeTest:
    """One node test: its model and its (inputs, expected outputs) data
    sets, values as ndarrays or TensorProtos (sequence/optional values stay
    in whatever form onnx gives them; they are reported, not run)."""
    name: str
    model: onnx.ModelProto
    data_sets: list = field(default_factory=list)


def node_data_dir():
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"


def _numbered(directory, prefix):
    """input_0.pb, input_1.pb, ... in numeric (not lexical) order."""
    files = directory.glob(f"{prefix}_*.pb")
    return sorted(files, key=lambda f: int(f.stem.split("_")[-1]))


def _load_value(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return tensor


def _tests_from_directory(root):
    tests = []
    for test_dir in sorted(root.glob("test_*")):
        model_file = test_dir / "model.onnx"
        if not model_file.is_file():
            continue
        model = onnx.load(str(model_file))
        data_sets = []
        for ds in sorted(test_dir.glob("test_data_set_*")):
            data_sets.append(
                ([_load_value(f) for f in _numbered(ds, "input")],
                 [_load_value(f) for f in _numbered(ds, "output")]))
        tests.append(NodeTest(test_dir.name, model, data_sets))
    return tests


def _tests_from_generators():
    """The cases onnx writes into data/node, built in memory. Seeded so the
    random inputs (and hence the rounding behaviour) are the same on every
    run: a test must not flip between pass and fail by chance."""
    from onnx.backend.test.case import node as node_cases

    state = np.random.get_state()
    np.random.seed(0)
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overflow in cast test data
            cases = node_cases.collect_testcases()
    finally:
        np.random.set_state(state)
    return [NodeTest(c.name, c.model, [(list(i), list(o)) for i, o
                                       in c.data_sets])
            for c in cases if c.kind == "node" and c.model is not None]


def discover_node_tests():
    """Every node test of the installed onnx package, sorted by name."""
    root = node_data_dir()
    tests = _tests_from_directory(root) if root.is_dir() else []
    if not tests:
        tests = _tests_from_generators()
    return sorted(tests, key=lambda t: t.name)


# -----------------------------------------------------------------------------
# What ingot claims
# -----------------------------------------------------------------------------

def ingot_bin(build_dir=None):
    path = Path(build_dir or BUILD_DIR) / "bin" / "ingot"
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise FileNotFoundError(f"{path} not found; build it first "
                                "(cmake --build build --target ingot)")
    return path


def list_onnx_ops(ingot):
    """The importer's registry: [{"op", "domain", "min_opset",
    "max_opset"}], straight from the binary so nothing can drift."""
    proc = subprocess.run([str(ingot), "compile", "--list-onnx-ops"],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError("ingot compile --list-onnx-ops failed:\n"
                           + proc.stderr)
    ops = json.loads(proc.stdout)
    for op in ops:
        op.setdefault("domain", "")
        if op["domain"] == "ai.onnx":
            op["domain"] = ""
    return ops


def _normal_domain(domain):
    return "" if domain in DEFAULT_DOMAINS else domain


def _all_nodes(graph):
    """The graph's nodes and those of every subgraph attribute (If, Loop,
    Scan bodies): a body op ingot does not know makes the test unclaimed."""
    for n in graph.node:
        yield n
        for attr in n.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _all_nodes(g)


def ops_used(model):
    """Sorted (domain, op type, opset) triples the model's nodes use. The
    opset is that of the default ONNX domain the model imports, for every
    node: the registry's opset ranges are stated in those terms (see
    OpConverter in compiler/onnx/OnnxImportContext.h), also for ops of
    other domains such as com.microsoft."""
    opsets = {_normal_domain(o.domain): o.version for o in model.opset_import}
    opset = opsets.get("", -1)
    return sorted({(_normal_domain(n.domain), n.op_type, opset)
                   for n in _all_nodes(model.graph)})


def is_claimed(triple, claims):
    domain, op, opset = triple
    return any(c["op"] == op and c["domain"] == domain
               and c["min_opset"] <= opset <= c["max_opset"] for c in claims)


def select_claimed(tests, claims):
    """The tests whose every (domain, op, opset) ingot claims to handle."""
    return [t for t in tests
            if all(is_claimed(u, claims) for u in ops_used(t.model))]


# -----------------------------------------------------------------------------
# The dynamic variant
# -----------------------------------------------------------------------------

def _graph_inputs(model):
    """The inputs the caller feeds, in order (not initializers)."""
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def make_dynamic(model, data_sets):
    """A copy of model with every dim of every tensor graph input turned
    into its own dim_param (d<input>_<axis>), and the sizes each symbol takes
    in the data sets. None when no input has a dim (nothing to vary).

    Each dim gets a distinct symbol, as onnx-mlir's dynamic runs do: the
    compiler may not assume that two equal-sized dims are the same one.
    value_info is dropped, since its static intermediate shapes would
    contradict the now-dynamic inputs."""
    dyn = onnx.ModelProto()
    dyn.CopyFrom(model)
    del dyn.graph.value_info[:]
    sizes = {}
    inputs = _graph_inputs(dyn)
    for i, inp in enumerate(inputs):
        if not inp.type.HasField("tensor_type"):
            continue
        shape = inp.type.tensor_type.shape
        if not inp.type.tensor_type.HasField("shape"):
            continue
        for axis, dim in enumerate(shape.dim):
            symbol = f"d{i}_{axis}"
            dim.Clear()
            dim.dim_param = symbol
            sizes[symbol] = 0
            for ins, _ in data_sets:
                if i < len(ins):
                    arr = to_array(ins[i])
                    if axis < arr.ndim:
                        sizes[symbol] = max(sizes[symbol], arr.shape[axis])
    return (dyn, sizes) if sizes else None


def dynamic_bound(sizes):
    """The --max-dim given to every symbol of a dynamic variant: twice the
    largest actual size (at least 2).

    Why not the default bound (512): ingot sizes its activation arena for
    the symbols' maxima, so a 4-D input would ask for 512^4 elements and a
    rank-7 one cannot even be described; the runs would measure memory, not
    dynamic-shape handling. Why headroom: running below the bounds is what
    catches code that silently assumes the maximum (strides, loop trip
    counts). Why one bound for all symbols: independent symbols that
    broadcast against each other must agree at their maxima too."""
    return max(2, 2 * max(sizes.values(), default=1))


# -----------------------------------------------------------------------------
# Values
# -----------------------------------------------------------------------------

class UnsupportedValue(Exception):
    """A data-set value that is not a plain tensor (sequence, map,
    optional): ingot's CLI feeds .npy tensors only."""


def to_array(value):
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, (np.generic, int, float, bool)):
        return np.asarray(value)
    raise UnsupportedValue(
        f"{type(value).__name__} value (sequence/map/optional types)")


def output_file_names(names):
    """The file `ingot run --output-dir` writes for each output name, in
    order: characters outside [A-Za-z0-9._-] become '_', clashes get _2,
    _3... (mirrors fileNameFor in tools/ingot/RunCommand.cpp)."""
    used, files = set(), []
    for name in names:
        base = re.sub(r"[^A-Za-z0-9._-]", "_", name)
        if not base.strip("."):
            base = "output" + base
        candidate, i = base, 2
        while candidate in used:
            candidate, i = f"{base}_{i}", i + 1
        used.add(candidate)
        files.append(candidate + ".npy")
    return files


def _plain(value):
    """A numpy scalar as the Python value it holds, for readable messages."""
    return value.item() if isinstance(value, np.generic) else value


def compare(actual, expected, rtol=RTOL, atol=ATOL):
    """None when actual matches expected the way onnx's backend runner
    requires (same dtype and shape; floats within rtol/atol with NaNs equal;
    everything else exactly); otherwise what differs, in one line."""
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"shape {list(actual.shape)}, expected {list(expected.shape)}"
    kind = expected.dtype.kind
    if kind in "fc":
        try:
            np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol,
                                       equal_nan=True)
        except AssertionError:
            a = actual.astype(np.complex128 if kind == "c" else np.float64)
            e = expected.astype(a.dtype)
            bad = ~(np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True))
            first = tuple(np.argwhere(bad)[0].tolist())
            return (f"{int(bad.sum())} of {expected.size} elements differ "
                    f"beyond rtol={rtol:g} atol={atol:g}; first at "
                    f"{list(first)}: {_plain(actual[first])!r} vs "
                    f"{_plain(expected[first])!r}")
        return None
    if kind == "V":  # ml_dtypes without numpy arithmetic: compare bits
        return (None if actual.tobytes() == expected.tobytes()
                else "the bytes differ")
    bad = np.argwhere(actual != expected)
    if len(bad):
        first = tuple(bad[0].tolist())
        return (f"{len(bad)} of {expected.size} elements differ; first at "
                f"{list(first)}: {_plain(actual[first])!r} vs "
                f"{_plain(expected[first])!r}")
    return None


# -----------------------------------------------------------------------------
# Running one test
# -----------------------------------------------------------------------------

@dataclass
class Result:
    test: str
    variant: str
    passed: bool
    stage: str = ""        # compile | input | run | compare | timeout
    message: str = ""
    ops: list = field(default_factory=list)  # [[domain, op, opset], ...]

    def key(self):
        return (self.test, self.variant)


def _last_error_line(proc, workdir):
    """The error ingot printed, without the temp-dir paths (so the same
    failure reads the same on every machine)."""
    text = (proc.stderr or proc.stdout or "").strip()
    line = next((ln for ln in text.splitlines() if "error" in ln.lower()),
                text.splitlines()[-1] if text else
                f"exit code {proc.returncode}")
    line = line.replace(f"{workdir}/", "")
    line = re.sub(r"'?model\.(onnx|ingot)'?:\s*", "", line)
    return re.sub(r"^error:\s*", "", line.strip())


def run_variant(ingot, test, variant, workdir):
    """Compiles and runs one variant of a test; a Result either way.
    Nothing raises: a crash or timeout is a failure like any other."""
    ops = [list(u) for u in ops_used(test.model)]

    def fail(stage, message):
        return Result(test.name, variant, False, stage, message, ops)

    model, extra = test.model, []
    if variant == DYNAMIC:
        model, sizes = make_dynamic(test.model, test.data_sets)
        bound = dynamic_bound(sizes)
        for symbol in sizes:
            extra += ["--max-dim", f"{symbol}={bound}"]
    workdir.mkdir(parents=True)
    model_path = workdir / "model.onnx"
    onnx.save(model, str(model_path))
    artifact = workdir / "model.ingot"
    try:
        proc = subprocess.run(
            [str(ingot), "compile", str(model_path), "-o", str(artifact),
             *extra], capture_output=True, text=True,
            timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return fail("timeout", f"compile took over {COMPILE_TIMEOUT_S}s")
    if proc.returncode != 0:
        return fail("compile", _last_error_line(proc, workdir))

    input_names = [i.name for i in _graph_inputs(test.model)]
    output_names = [o.name for o in test.model.graph.output]
    out_files = output_file_names(output_names)
    for n, (inputs, expected) in enumerate(test.data_sets):
        args = []
        try:
            for name, value in zip(input_names, inputs):
                f = workdir / f"set{n}_in{len(args) // 2}.npy"
                np.save(f, to_array(value), allow_pickle=False)
                args += ["--input", f"{name}={f}"]
            expected = [to_array(v) for v in expected]
        except UnsupportedValue as e:
            return fail("input", f"cannot feed a {e}")
        except ValueError as e:  # e.g. an object array (strings) for .npy
            return fail("input", f"cannot write an input as .npy: {e}")
        out_dir = workdir / f"set{n}_out"
        try:
            proc = subprocess.run(
                [str(ingot), "run", str(artifact), *args, "--output-dir",
                 str(out_dir), "--threads", "1"],
                capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return fail("timeout", f"run took over {RUN_TIMEOUT_S}s")
        if proc.returncode != 0:
            return fail("run", _last_error_line(proc, workdir))
        for name, file, want in zip(output_names, out_files, expected):
            path = out_dir / file
            if not path.is_file():
                return fail("run", f"output '{name}' not written")
            diff = compare(np.load(path, allow_pickle=False), want)
            if diff:
                return fail("compare", f"output '{name}': {diff}")
    return Result(test.name, variant, True, ops=ops)


def variants_of(test):
    """static always; dynamic only where some input has a dim to vary."""
    has_dims = make_dynamic(test.model, test.data_sets) is not None
    return VARIANTS if has_dims else (STATIC,)


def run_suite(ingot, tests, workers=WORKERS, progress=None):
    """Runs every variant of every test on a pool of `workers` threads (each
    drives ingot subprocesses); results sorted by (test, variant)."""
    jobs = [(t, v) for t in tests for v in variants_of(t)]
    with tempfile.TemporaryDirectory(prefix="ingot-node-suite-") as tmp:
        def one(job):
            test, variant = job
            try:
                result = run_variant(ingot, test, variant,
                                     Path(tmp) / test.name / variant)
            except Exception as e:  # a bug in a test's data, not in ingot
                result = Result(test.name, variant, False, "input",
                                f"{type(e).__name__}: {e}",
                                [list(u) for u in ops_used(test.model)])
            if progress:
                progress(result)
            return result
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, jobs))
    return sorted(results, key=Result.key)


# -----------------------------------------------------------------------------
# Failure families (the reasons in the expected-failure list)
# -----------------------------------------------------------------------------

# (regex over a failure message, reason). The first match wins; the reason
# may use the groups. Messages are ingot's own errors, which name the node's
# op type as "(Op, opset N)"; the reasons drop node and tensor names so that
# failures of one kind share one reason.
_OP = r"\((\w+), opset \d+\): "
FAMILY_RULES = [
    (r"^cannot feed ", "sequence/optional values unsupported"),
    (r"is not a tensor", "sequence/optional values unsupported"),
    (r"has dtype (\w+)", r"dtype \1 unsupported"),
    (_OP + r".*element type (\w+)", r"\1: dtype \2 unsupported"),
    (_OP + r"(\w+)(?: \(with axes\))?(?: \('[^']*'\))? must be known at "
     r"compile time", r"data-dependent operand: \1 \2 must be constant"),
    (r"node '[^']*': 'ingot\.(\w+)' op result size depends on run-time",
     r"data-dependent output size (\1)"),
    (r"at the symbols' maxima: cannot broadcast",
     "broadcast checked at the symbols' maxima"),
    (r"cannot allocate the activation arena", "activation arena too large"),
    (_OP + r"output '[^']*' \([^)]*\) is used",
     r"\1: optional outputs unsupported"),
    (_OP + r"(.*?) — supported", r"\1: \2 unsupported"),
    (_OP + r"(.*)", r"\1: \2"),
    (r"^output '[^']*': dtype", "wrong output dtype"),
    (r"^output '[^']*': shape", "wrong output shape"),
    (r"^output '[^']*': .*elements differ", "numerical mismatch"),
]


def failure_family(result, test=None):
    """A short reason shared by failures of one kind, for the xfail list.
    Comparison failures of a single-op test name the op."""
    if result.stage == "timeout":
        return "timeout"
    for pattern, reason in FAMILY_RULES:
        m = re.search(pattern, result.message)
        if m:
            family = m.expand(reason)
            break
    else:
        family = f"{result.stage} failed: {result.message}"
    # "dim 0", "dim 1": one family, whichever axis a test happens to use.
    family = re.sub(r"\b(dim|axis) \d+\b", r"\1", family)
    family = re.sub(r"\s+", " ", family)[:100]
    if result.stage == "compare":
        ops = {op for _, op, _ in result.ops}
        if len(ops) == 1:
            family = f"{ops.pop()}: {family}"
        elif test is not None and "_expanded" in test.name:
            family += " (expanded function)"
    return family


# -----------------------------------------------------------------------------
# The expected-failure list
# -----------------------------------------------------------------------------

def read_xfail(path=XFAIL_FILE):
    """{(test, variant): reason}. Lines: `test_name static|dynamic  # reason`
    (or no variant: both). Blank lines and whole-line comments are skipped."""
    entries = {}
    if not Path(path).is_file():
        return entries
    for lineno, raw in enumerate(Path(path).read_text().splitlines(), 1):
        text, _, reason = raw.partition("#")
        words = text.split()
        if not words:
            continue
        if len(words) > 2 or (len(words) == 2 and words[1] not in VARIANTS):
            raise ValueError(f"{path}:{lineno}: expected "
                             f"'test_name [static|dynamic]  # reason'")
        for variant in words[1:] or VARIANTS:
            entries[(words[0], variant)] = reason.strip()
    return entries


def check_expectations(results, xfail):
    """(unexpected failures, stale entries): failures not on the list, and
    list entries whose test passed or did not run at all."""
    ran = {r.key(): r for r in results}
    unexpected = [r for r in results if not r.passed and r.key() not in xfail]
    stale = []
    for key, reason in sorted(xfail.items()):
        r = ran.get(key)
        if r is None:
            # `test_x  # reason` covers both variants; a test with no
            # dynamic variant only needs the static one to run.
            if key[1] == DYNAMIC and (key[0], STATIC) in ran:
                continue
            stale.append((key, reason, "did not run (not claimed, or no "
                                       "such test)"))
        elif r.passed:
            stale.append((key, reason, "passed"))
    return unexpected, stale


def write_xfail(results, tests_by_name, path=XFAIL_FILE):
    """Rewrites the list from results: one line per failing test, the
    variant named only when the other one passes, grouped by reason.
    Reasons are always derived afresh from the failure (FAMILY_RULES), so a
    test whose failure changed cause never keeps an outdated reason."""
    failing = {}
    for r in results:
        if not r.passed:
            failing.setdefault(r.test, {})[r.variant] = failure_family(
                r, tests_by_name.get(r.test))
    variants = {}
    for r in results:
        variants.setdefault(r.test, set()).add(r.variant)
    lines = []
    for test, by_variant in failing.items():
        if set(by_variant) == variants[test]:
            reason = by_variant.get(STATIC) or by_variant[DYNAMIC]
            lines.append((reason, test, ""))
        else:
            for variant, reason in by_variant.items():
                lines.append((reason, test, variant))
    lines.sort()
    header = (
        "# ONNX node tests that ingot claims (every op supported at its\n"
        "# opset) but that fail: `test_name [static|dynamic]  # reason`;\n"
        "# no variant means both fail. test_onnx_node_suite.py fails on any\n"
        "# failure not listed here and on any listed test that passes.\n"
        "# Regenerate: python test/e2e/onnx_node_suite.py --write-xfail\n"
        "# Reasons come from FAMILY_RULES in onnx_node_suite.py; improve a\n"
        "# rule rather than editing reasons here.\n")
    width = max((len(t) + len(v) + 1 for _, t, v in lines), default=0)
    body = "".join(f"{(t + ' ' + v).strip():<{width}}  # {reason}\n"
                   for reason, t, v in lines)
    Path(path).write_text(header + body)


# -----------------------------------------------------------------------------
# Reports
# -----------------------------------------------------------------------------

def summary(results, xfail, claimed, total_tests):
    """The numbers in a few lines: what ran, what passed, what failed why."""
    def count(variant, passed=None):
        return sum(1 for r in results if r.variant == variant
                   and (passed is None or r.passed == passed))

    unexpected, stale = check_expectations(results, xfail)
    xfailed = sum(1 for r in results if not r.passed and r.key() in xfail)
    lines = [
        f"ONNX node tests: {total_tests} in onnx {onnx.__version__}, "
        f"{len(claimed)} claimed by ingot (every op supported)",
        f"  static : {count(STATIC, True)} / {count(STATIC)} passed",
        f"  dynamic: {count(DYNAMIC, True)} / {count(DYNAMIC)} passed",
        f"  expected failures: {xfailed}; unexpected failures: "
        f"{len(unexpected)}; stale expected-failure entries: {len(stale)}",
    ]
    families = Counter(xfail.get(r.key()) or "(unlisted) " + r.message[:60]
                       for r in results if not r.passed)
    if families:
        lines.append("  biggest failure families:")
        for reason, n in families.most_common(10):
            lines.append(f"    {n:4d}  {reason}")
    return "\n".join(lines)


def results_json(results, claims, claimed, total_tests):
    return {
        "generated_by": "python test/e2e/onnx_node_suite.py --json FILE",
        "onnx_version": onnx.__version__,
        "node_tests": total_tests,
        "claims": claims,
        "claimed_tests": [t.name for t in claimed],
        "results": [r.__dict__ for r in results],
    }


def run(build_dir=None, pattern=None, workers=WORKERS, verbose=False):
    """Discovers, selects and runs the suite: (results, claims, claimed
    tests, number of node tests)."""
    ingot = ingot_bin(build_dir)
    claims = list_onnx_ops(ingot)
    tests = discover_node_tests()
    claimed = select_claimed(tests, claims)
    if pattern:
        claimed = [t for t in claimed if re.search(pattern, t.name)]

    def progress(r):
        if verbose:
            print(f"{'PASS' if r.passed else 'FAIL'} {r.test} [{r.variant}]"
                  + ("" if r.passed else f": {r.stage}: {r.message}"),
                  flush=True)
    results = run_suite(ingot, claimed, workers, progress)
    return results, claims, claimed, len(tests)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", type=Path, default=None,
                   help="build directory with bin/ingot (default: "
                        "$INGOT_BUILD_DIR or <repo>/build)")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--write-xfail", action="store_true",
                   help=f"rewrite {XFAIL_FILE.name} from these results")
    p.add_argument("-k", dest="pattern", help="only tests matching REGEX")
    p.add_argument("-j", dest="workers", type=int, default=WORKERS)
    p.add_argument("-v", dest="verbose", action="store_true",
                   help="print every result as it comes")
    args = p.parse_args(argv)

    start = time.monotonic()
    results, claims, claimed, total = run(args.build_dir, args.pattern,
                                          args.workers, args.verbose)
    if args.json:
        args.json.write_text(json.dumps(
            results_json(results, claims, claimed, total), indent=1) + "\n")
    if args.write_xfail:
        if args.pattern:
            p.error("--write-xfail needs the whole suite (no -k)")
        write_xfail(results, {t.name: t for t in claimed})
    xfail = read_xfail()
    print(summary(results, xfail, claimed, total))
    print(f"  ({time.monotonic() - start:.0f}s with {args.workers} workers)")
    unexpected, stale = check_expectations(results, xfail)
    if args.pattern:  # a subset cannot judge the list's other entries
        stale = [s for s in stale if s[2] == "passed"]
    for r in unexpected:
        print(f"UNEXPECTED FAILURE {r.test} [{r.variant}] {r.stage}: "
              f"{r.message}")
    for (test, variant), reason, why in stale:
        print(f"STALE ENTRY {test} [{variant}] ({reason}): {why}")
    return 1 if unexpected or stale else 0


if __name__ == "__main__":
    sys.exit(main())
