"""Concat inputs written in place: the memory planner puts each input of a
channel concat (batch 1, static shapes) at its slab of the output, its
producer writes there and the concat kernel skips it. YOLOv8's C2f blocks
are the case. The plan must show the placement where it is allowed and
keep inputs apart where it is not (a graph input, a model output, a value
read after the concat's reader, a batch of 2), and every result must match
onnxruntime within F32_RTOL (ingot_testlib)."""
import re

import numpy as np
import pytest

from ingot_testlib import (assert_close, compile_model, describe, ingot,
                           make_model, node, ort_run, run_model, save_model,
                           seed_for)

F32 = np.float32


def c2f_like_model(rng, batch):
    """x -> conv a -> conv b (+ a) -> Concat(a, b, x, t) -> conv y, where t
    is a Tanh of b that is also a model output, and a is read again by an
    Add after the conv over the concat ("late")."""
    c, m = 8, 16
    inits = {}
    for name, cin in (("wa", c), ("wb", m), ("wy", 3 * m + c)):
        inits[name] = (rng.standard_normal((m, cin, 3, 3)) /
                       np.sqrt(9 * cin)).astype(F32)
        inits["b" + name[1]] = rng.standard_normal(m).astype(F32)
    nodes = [
        node("Conv", ["x", "wa", "ba"], ["a"], pads=[1] * 4),
        node("Conv", ["a", "wb", "bb"], ["cb"], pads=[1] * 4),
        node("Add", ["cb", "a"], ["b"]),
        node("Tanh", ["b"], ["t"]),
        node("Concat", ["a", "b", "x", "t"], ["cat"], axis=1),
        node("Conv", ["cat", "wy", "by"], ["y"], pads=[1] * 4),
        node("Add", ["y", "a"], ["late"]),
    ]
    return make_model(nodes, [("x", F32, [batch, c, 12, 12])],
                      ["y", "t", "late"], inits)


def planned_offsets(model_path):
    """Each plan value's arena offset and the concat step's ins and out."""
    proc = ingot("compile", model_path, "--compile-to=plan")
    assert proc.returncode == 0, describe(proc)
    offsets = {m[1]: int(m[2]) for m in re.finditer(
        r"(%\d+) = plan\.alloc \{[^}]*offset = (\d+)", proc.stdout)}
    cat = re.search(r'plan\.kernel "concat" ins\(([^:]*):.*?outs\((%\d+)',
                    proc.stdout)
    assert cat, proc.stdout
    ins = [v.strip() for v in cat[1].split(",")]
    return offsets, ins, cat[2]


@pytest.mark.parametrize("batch", [1, 2])
def test_concat_inputs_written_in_place(batch, tmp_path, request):
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    model = c2f_like_model(rng, batch)
    path = save_model(model, tmp_path / "m.onnx")
    offsets, ins, out = planned_offsets(path)
    slab = 16 * 12 * 12 * 4  # bytes of a and of b at batch 1
    out_bytes = batch * (3 * 16 + 8) * 12 * 12 * 4
    inside = [v for v in ins if v in offsets and
              offsets[out] <= offsets[v] < offsets[out] + out_bytes]
    b = ins[1]
    if batch == 1:
        # b alone lies in its slab: a is read after the concat's reader
        # (late), x is a graph input and t a model output.
        assert inside == [b], (offsets, ins, out)
        assert offsets[b] == offsets[out] + slab, (offsets, ins, out)
    else:
        # Two images interleave each input's runs in the output.
        assert inside == [], (offsets, ins, out)
    art = tmp_path / "m.ingot"
    compile_model(path, art)
    feed = {"x": rng.standard_normal((batch, 8, 12, 12)).astype(F32)}
    want = ort_run(model, feed)
    for threads in (1, 2):
        got = run_model(art, feed, tmp_path, threads=threads)
        for name in ("y", "t", "late"):
            assert_close(got[name], want[name],
                         what=f"{name}, batch {batch}, {threads} threads")
