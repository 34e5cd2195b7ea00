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
turns a --json result file into docs/supported-ops.md. Discovery and case
generation are in onnx_node_cases.py, the failure families and the
expected-failure list in onnx_node_xfail.py; their names are re-exported
here.
"""
from __future__ import annotations

import argparse
import json
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

from onnx_node_cases import (  # noqa: F401 (re-exported: suite.X)
    SOURCE_DIR, BUILD_DIR, XFAIL_FILE, RTOL, ATOL, WORKERS,
    COMPILE_TIMEOUT_S, RUN_TIMEOUT_S, STATIC, DYNAMIC, VARIANTS,
    DEFAULT_DOMAINS, NodeTest, node_data_dir, _numbered, _load_value,
    _tests_from_directory, _tests_from_generators, discover_node_tests,
    ingot_bin, list_onnx_ops, _normal_domain, _all_nodes, ops_used,
    is_claimed, select_claimed, _graph_inputs, make_dynamic, dynamic_bound,
    UnsupportedValue, to_array)
from onnx_node_xfail import (  # noqa: F401 (re-exported: suite.X)
    _OP, FAMILY_RULES, failure_family, read_xfail, check_expectations,
    write_xfail)


# -----------------------------------------------------------------------------
# Values
# -----------------------------------------------------------------------------

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
    if (actual.dtype.kind == "V" and expected.dtype != actual.dtype
            and actual.dtype.itemsize == expected.dtype.itemsize
            and expected.dtype.type.__module__.startswith("ml_dtypes")):
        # numpy saves ml_dtypes' types (bfloat16, float8, int4, ...) as raw
        # values, and ingot writes them so: the expected type says which.
        actual = actual.view(expected.dtype)
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"shape {list(actual.shape)}, expected {list(expected.shape)}"
    kind = expected.dtype.kind
    if expected.dtype.name == "bfloat16":
        # Results of arithmetic in bf16 (the expanded functions' casts):
        # ingot computes in f32 and rounds once where the reference may
        # round per op, so one bf16 unit in the last place (2^-7) apart.
        eps = 2.0 ** -7
        return compare(actual.astype(np.float32), expected.astype(np.float32),
                       rtol=max(rtol, eps), atol=max(atol, eps))
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
