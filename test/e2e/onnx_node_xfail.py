"""The expected-failure side of the ONNX node-test suite (onnx_node_suite.py
runs it): the failure families that give each failure its short reason, and
reading, checking and rewriting the list (onnx_node_suite_xfail.txt).
"""
from __future__ import annotations

import re
from pathlib import Path

from onnx_node_cases import XFAIL_FILE, STATIC, DYNAMIC, VARIANTS

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
    (r"at the symbols' maxima (?:\([^)]*\))?: cannot broadcast",
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
        "# Reasons come from FAMILY_RULES in onnx_node_xfail.py; improve a\n"
        "# rule rather than editing reasons here.\n")
    width = max((len(t) + len(v) + 1 for _, t, v in lines), default=0)
    body = "".join(f"{(t + ' ' + v).strip():<{width}}  # {reason}\n"
                   for reason, t, v in lines)
    Path(path).write_text(header + body)
