"""The checked-in seed artifacts of the artifact fuzz target still load.

A seed the loader refuses at its header (say after a checksum or format
change) still replays without a crash, so the replay tests pass, but a
campaign started from it only ever reaches the header check. This keeps
the seeds current: regenerate them with
    .venv/bin/python test/fuzz/make_corpus.py --only-artifacts
"""
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot

SEEDS = sorted(p for p in (SOURCE_DIR / "test/fuzz/corpus/artifact").iterdir()
               if not p.name.startswith("crash-"))


@pytest.mark.parametrize("seed", SEEDS, ids=[p.name for p in SEEDS])
def test_seed_artifact_loads(seed):
    proc = ingot("inspect", seed)
    assert proc.returncode == 0, (
        "stale fuzz seed; regenerate with test/fuzz/make_corpus.py "
        "--only-artifacts\n" + describe(proc))
