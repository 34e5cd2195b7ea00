"""Faults from outside: `ingot compile` killed at any moment or writing to a
full disk keeps the artifact already at the output path byte for byte and
leaves no temp file behind for long; the serving engine under heavy KV
over-subscription completes every request in bounded memory.

The model is a random 6-layer llama of hidden size 512 (~75 MB of F32
weights, test/fixtures/hf_models.py with larger dimensions), so that
writing its artifact takes long enough to be interrupted mid-way.
"""
import os
import random
import resource
import signal
import subprocess
import sys
import time

import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot, ingot_bin

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402

MEDIUM = dict(HIDDEN=512, HEADS=8, KV_HEADS=4, HEAD_DIM=64, LAYERS=6, INTERMEDIATE=1536)


@pytest.fixture(scope="module")
def medium(tmp_path_factory):
    saved = {k: getattr(hf_models, k) for k in MEDIUM}
    for k, v in MEDIUM.items():
        setattr(hf_models, k, v)
    try:
        return hf_models.make_model("llama", tmp_path_factory.mktemp("faults"))
    finally:
        for k, v in saved.items():
            setattr(hf_models, k, v)


@pytest.fixture
def existing(medium, tmp_path):
    """An artifact already at the output path, and its bytes."""
    out = tmp_path / "m.ingot"
    proc = ingot("compile", medium, "-o", out)
    assert proc.returncode == 0, describe(proc)
    return out, out.read_bytes()


def temps(out):
    return sorted(out.parent.glob(out.name + ".tmp-*"))


def start_compile(model, out, **popen):
    return subprocess.Popen([str(ingot_bin()), "compile", str(model), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **popen)


def kill_when_writing(proc, out, sig):
    """Sends `sig` as soon as the temp file appears; False if the compile
    finished before one was seen."""
    while proc.poll() is None:
        if temps(out):
            proc.send_signal(sig)
            return True
        time.sleep(0.0005)
    return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_while_writing_removes_temp_and_keeps_artifact(medium, existing, sig):
    out, before = existing
    proc = start_compile(medium, out)
    assert kill_when_writing(proc, out, sig), "the compile finished before it wrote"
    proc.communicate(timeout=60)
    assert proc.returncode == -sig, f"exit {proc.returncode}, expected death by {sig!r}"
    assert out.read_bytes() == before
    assert temps(out) == []


def test_sigkill_at_random_moments_then_next_compile_cleans_up(medium, existing):
    out, before = existing
    start = time.monotonic()
    assert ingot("compile", medium, "-o", out).returncode == 0
    duration = time.monotonic() - start
    rng = random.Random(17)
    mid_write = 0
    for _ in range(6):
        proc = start_compile(medium, out)
        time.sleep(rng.uniform(0, duration))
        proc.kill()
        proc.communicate(timeout=60)
        # Compiles are deterministic, so a compile that won the race wrote
        # the very same bytes.
        assert out.read_bytes() == before
    for _ in range(3):  # and certainly once while the temp file is open
        proc = start_compile(medium, out)
        mid_write += kill_when_writing(proc, out, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert out.read_bytes() == before
    assert mid_write and temps(out), "no kill landed while the artifact was written"
    proc = ingot("compile", medium, "-o", out)
    assert proc.returncode == 0, describe(proc)
    assert temps(out) == [], "stale temp files of killed compiles were left"
    assert out.read_bytes() == before


def test_full_disk_is_a_clear_error_and_keeps_artifact(medium, existing):
    out, before = existing
    limit = 1 << 20  # RLIMIT_FSIZE: writes beyond 1 MiB fail with EFBIG

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = start_compile(medium, out, preexec_fn=small_disk)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, f"exit {proc.returncode}\n{err}"
    assert str(out) in err and "File too large" in err, err
    assert out.read_bytes() == before
    assert temps(out) == []


def can_mount_tmpfs():
    """Whether a user and mount namespace may be made here (unprivileged
    user namespaces on, or root), to mount a small tmpfs in it."""
    try:
        return subprocess.run(["unshare", "-Urm", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def test_real_full_disk_keeps_artifact(medium, tmp_path):
    """A real ENOSPC: a 16 MiB tmpfs (mounted in a private mount namespace)
    holds a small artifact; compiling the 75 MB model over it fails with
    "No space left on device", the small artifact stays byte-identical and
    the temp file is gone (it held the space the disk did not have)."""
    if not can_mount_tmpfs():
        pytest.skip("cannot make a user+mount namespace (unshare -Urm) here")
    small = hf_models.make_model("llama", tmp_path / "small")
    disk = tmp_path / "disk"
    disk.mkdir()
    out = disk / "m.ingot"
    script = f"""
set -e
mount -t tmpfs -o size=16m tmpfs '{disk}'
'{ingot_bin()}' compile '{small}' -o '{out}'
cp '{out}' '{tmp_path}/before.ingot'
set +e
'{ingot_bin()}' compile '{medium}' -o '{out}' 2> '{tmp_path}/err.txt'
echo $? > '{tmp_path}/rc.txt'
cmp '{out}' '{tmp_path}/before.ingot' > '{tmp_path}/cmp.txt' 2>&1
echo $? >> '{tmp_path}/cmp.txt'
ls -a '{disk}' > '{tmp_path}/ls.txt'
df -k '{disk}' > '{tmp_path}/df.txt'
"""
    proc = subprocess.run(["unshare", "-Urm", "sh", "-c", script],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, describe(proc)
    err = (tmp_path / "err.txt").read_text()
    assert (tmp_path / "rc.txt").read_text().strip() == "1", err
    assert str(out) in err and "No space left on device" in err, err
    assert (tmp_path / "cmp.txt").read_text().strip() == "0", \
        (tmp_path / "cmp.txt").read_text()
    left = (tmp_path / "ls.txt").read_text().split()
    assert sorted(left) == [".", "..", "m.ingot"], left


def test_engine_completes_2000_requests_under_kv_oversubscription(tmp_path):
    """64 sequences of 48 tokens need 192 KV blocks of 16; the cache has 32
    (6x over-subscribed), so the scheduler must queue and preempt. Memory
    must not grow with the queue: 2,000 requests peak within 1.5x (+32 MiB)
    of 200."""
    model = hf_models.make_model("llama", tmp_path)
    art = tmp_path / "m.ingot"
    assert ingot("compile", model, "-o", art).returncode == 0

    def bench(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        proc = ingot("bench", art, "--input-len", 24, "--output-len", 24,
                     "--num-prompts", n, "--kv-blocks", 32, "--threads", 2,
                     "--no-probe", "--json", tmp_path / f"b{n}.json", timeout=600)
        assert proc.returncode == 0, describe(proc)
        import json
        result = json.loads((tmp_path / f"b{n}.json").read_text())
        assert (result["completed"], result["failed"]) == (n, 0), result
        return max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)

    small = bench(200)
    large = bench(2000)  # ru_maxrss of children is a running maximum (KiB)
    print(f"peak RSS: 200 requests {small / 1024:.0f} MiB, "
          f"2000 requests {large / 1024:.0f} MiB")
    if os.environ.get("INGOT_SANITIZED") == "1":
        return  # ASan's quarantine holds up to 256 MiB of freed memory
    assert large <= small * 1.5 + 32 * 1024
