"""The ONNX node-test suite as a ctest target (see onnx_node_suite.py).

The suite runs once per session; the tests then judge it against the
expected-failure list, strictly both ways: a failure not on the list is a
regression, and a listed test that passes is a stale entry (left in place,
it would hide the next regression of that test). docs/supported-ops.md must
be what scripts/gen_supported_ops.py writes for these very results, so the
published table cannot drift from the binary's registry or the measured
coverage.
"""
import json
import sys

import pytest

import onnx_node_suite as suite

sys.path.insert(0, str(suite.SOURCE_DIR / "scripts"))
import gen_supported_ops  # noqa: E402

REGENERATE = ("python test/e2e/onnx_node_suite.py --write-xfail "
              "--json results.json && python scripts/gen_supported_ops.py "
              "--results results.json")


@pytest.fixture(scope="module")
def outcome():
    """(results, claims, claimed tests, node-test count, suite json). The
    results also go to the build directory, for gen_supported_ops.py."""
    results, claims, claimed, total = suite.run()
    as_json = suite.results_json(results, claims, claimed, total)
    out = suite.BUILD_DIR / "onnx_node_suite_results.json"
    out.write_text(json.dumps(as_json, indent=1) + "\n")
    return results, claims, claimed, total, as_json


@pytest.fixture(scope="module")
def xfail():
    return suite.read_xfail()


def test_summary(outcome, xfail, capsys):
    """Prints the numbers (shown by `ctest -V` and on failure)."""
    results, _, claimed, total, _ = outcome
    with capsys.disabled():
        print("\n" + suite.summary(results, xfail, claimed, total))
    assert claimed, "no node test uses only claimed ops: empty registry?"


def test_no_unexpected_failures(outcome, xfail):
    results = outcome[0]
    unexpected, _ = suite.check_expectations(results, xfail)
    assert not unexpected, (
        f"{len(unexpected)} node test(s) failed that "
        f"{suite.XFAIL_FILE.name} does not list:\n" + "\n".join(
            f"  {r.test} [{r.variant}] {r.stage}: {r.message}"
            for r in unexpected) +
        f"\nFix them, or (for a known limitation) list them: {REGENERATE}")


def test_no_stale_expected_failures(outcome, xfail):
    results = outcome[0]
    _, stale = suite.check_expectations(results, xfail)
    assert not stale, (
        f"{len(stale)} entr(y/ies) of {suite.XFAIL_FILE.name} no longer "
        "fail:\n" + "\n".join(f"  {t} [{v}] ({reason}): {why}"
                              for (t, v), reason, why in stale) +
        f"\nRemove them (or regenerate: {REGENERATE})")


def test_supported_ops_doc_is_current(outcome):
    """docs/supported-ops.md lists exactly the registry's ops and opset
    ranges, with the pass counts of this run."""
    _, claims, _, _, as_json = outcome
    ingot = suite.ingot_bin()
    want = gen_supported_ops.render(
        claims, as_json, gen_supported_ops.list_hf_architectures(ingot),
        gen_supported_ops.list_gguf_architectures(ingot))
    doc = gen_supported_ops.DOC
    have = doc.read_text() if doc.is_file() else ""

    def table(text):
        return [ln for ln in text.splitlines() if ln.startswith("| ")]

    def ops_only(rows):  # op, domain, opsets: what the registry decides
        return [r.split("|")[1:4] for r in rows]
    assert ops_only(table(have)) == ops_only(table(want)), (
        f"{doc} does not list the registry's ops (see "
        f"`ingot compile --list-onnx-ops`); regenerate: {REGENERATE}")
    assert have == want, (
        f"{doc} is out of date (pass counts or architectures); "
        f"regenerate: {REGENERATE}")
