"""LSTM and GRU compiled by ingot and compared with onnxruntime: every
direction, with and without bias and initial state, symbolic sequence
length, each output alone or all of them (one ingot.lstm / ingot.gru step
per node either way), opsets 7 and 14, GRU's linear_before_reset both ways; and the refusals of what the
kernels do not compute (sequence_lens, clip, batch-first layout, other
activations, peepholes).

The weights are U(-0.5, 0.5) so the gates stay away from saturation, where
a wrong gate order or sign would hide.
"""
import json

import numpy as np
import pytest

from ingot_testlib import (Model, assert_clean_failure, assert_close,
                           compile_model, ingot, make_model, node, ort_run,
                           run_model, save_model)
from ops_case_lib import F32, results_fixture, sym2

_rng = np.random.default_rng(2024)


def w(*shape):
    return _rng.uniform(-0.5, 0.5, shape).astype(F32)


def signed(r, s):
    return r.uniform(-1.5, 1.5, s).astype(F32)


CASES = []
H, I = 4, 3
for key, direction, seq, batch, bias, state, outputs, opset in [
        ("fwd_full", "forward", 5, 2, True, True, ("y", "yh", "yc"), 14),
        ("fwd_plain", "forward", 6, 1, False, False, ("y", "yh", "yc"), 7),
        ("reverse", "reverse", 4, 3, True, False, ("y", "yh", "yc"), 14),
        ("bidir", "bidirectional", 5, 2, True, True, ("y", "yh", "yc"), 14),
        ("only_h", "forward", 7, 2, True, True, ("", "yh"), 14),
        ("sym_seq", "bidirectional", "s", 2, True, False, ("y", "yh", "yc"),
         14),
        # More than 4 rows: R goes through packed GEMM panels.
        ("wide_batch", "bidirectional", 3, 6, True, True, ("y", "yh", "yc"),
         14)]:
    dirs = 2 if direction == "bidirectional" else 1
    args = [("x", F32, [seq, batch, I]), ("w", w(dirs, 4 * H, I)),
            ("r", w(dirs, 4 * H, H)),
            ("b", w(dirs, 8 * H)) if bias else "", ""]
    if state:
        args += [("h0", F32, [dirs, batch, H]), ("c0", F32, [dirs, batch, H])]
    gen = {"x": signed, "h0": signed, "c0": signed}
    ins = [a for a in args if isinstance(a, tuple) and len(a) == 3]
    inits = {a[0]: a[1] for a in args if isinstance(a, tuple) and len(a) == 2}
    names = [a if isinstance(a, str) else a[0] for a in args]
    lstm = node("LSTM", names, list(outputs), name=f"lstm_{key}",
                hidden_size=H, direction=direction)
    CASES.append(pytest.param(
        Model(f"lstm_{key}", [lstm], ins, [o for o in outputs if o], inits,
              opset, sym2(3, 8, "s") if seq == "s" else ({},), gen), id=key))

# GRU: z, r, h gates; both reset placements (linear_before_reset).
for key, direction, seq, batch, bias, state, lbr, outputs, opset in [
        ("fwd_full", "forward", 5, 2, True, True, 0, ("y", "yh"), 14),
        ("fwd_lbr", "forward", 4, 3, True, True, 1, ("y", "yh"), 14),
        ("plain_op7", "forward", 6, 1, False, False, 0, ("y", "yh"), 7),
        ("reverse_lbr", "reverse", 4, 2, True, False, 1, ("y", "yh"), 14),
        ("bidir", "bidirectional", 5, 2, True, True, 0, ("y", "yh"), 14),
        ("only_h_sym", "bidirectional", "s", 2, True, False, 1, ("", "yh"),
         14),
        ("wide_batch", "bidirectional", 3, 6, True, True, 1, ("y", "yh"),
         14)]:
    dirs = 2 if direction == "bidirectional" else 1
    args = [("x", F32, [seq, batch, I]), ("w", w(dirs, 3 * H, I)),
            ("r", w(dirs, 3 * H, H)),
            ("b", w(dirs, 6 * H)) if bias else "", ""]
    if state:
        args.append(("h0", F32, [dirs, batch, H]))
    ins = [a for a in args if isinstance(a, tuple) and len(a) == 3]
    inits = {a[0]: a[1] for a in args if isinstance(a, tuple) and len(a) == 2}
    names = [a if isinstance(a, str) else a[0] for a in args]
    gru = node("GRU", names, list(outputs), name=f"gru_{key}", hidden_size=H,
               direction=direction, linear_before_reset=lbr)
    CASES.append(pytest.param(
        Model(f"gru_{key}", [gru], ins, [o for o in outputs if o], inits,
              opset, sym2(3, 8, "s") if seq == "s" else ({},),
              {"x": signed, "h0": signed}), id=f"gru_{key}"))

results = results_fixture()


@pytest.mark.parametrize("model", CASES)
def test_recurrent(model, results):
    for label, got, expected in results(model):
        assert sorted(got) == sorted(expected), label
        for name in expected:
            # sigmoid/tanh within 3 ulp, sums over H + I terms per step,
            # carried through the steps: 1e-5 of the largest value.
            assert_close(got[name], expected[name], what=f"{name} ({label})")


@pytest.mark.parametrize("inputs,attrs,message", [
    (["x", "w", "r", "", "lens"], {}, "sequence_lens"),
    (["x", "w", "r"], {"clip": 1.0}, "clip"),
    (["x", "w", "r"], {"layout": 2}, "layout = 2"),
    (["x", "w", "r"], {"activations": ["Sigmoid", "Relu", "Tanh"]},
     "activation 'Relu'"),
], ids=["sequence_lens", "clip", "layout", "activations"])
def test_unsupported_lstm_is_refused(inputs, attrs, message, tmp_path):
    inits = {"w": w(1, 4 * H, I), "r": w(1, 4 * H, H),
             "lens": np.array([2, 2], np.int32)}
    model = make_model(
        [node("LSTM", inputs, ["y"], hidden_size=H, **attrs)],
        [("x", F32, [3, 2, I])], [("y", F32, None)],
        {k: v for k, v in inits.items() if k in inputs}, 14, check=False)
    proc = compile_model(save_model(model, tmp_path / "m.onnx"),
                         tmp_path / "m.ingot", check=False)
    assert_clean_failure(proc)
    assert message in proc.stderr, proc.stderr


@pytest.mark.parametrize("attrs,message", [
    ({"layout": 2}, "layout = 2"),
    ({"activations": ["Sigmoid", "Relu"]}, "activation 'Relu'"),
    ({"clip": 2.0}, "clip"),
], ids=["layout", "activations", "clip"])
def test_unsupported_gru_is_refused(attrs, message, tmp_path):
    model = make_model(
        [node("GRU", ["x", "w", "r"], ["y"], hidden_size=H, **attrs)],
        [("x", F32, [3, 2, I])], [("y", F32, None)],
        {"w": w(1, 3 * H, I), "r": w(1, 3 * H, H)}, 14, check=False)
    proc = compile_model(save_model(model, tmp_path / "m.onnx"),
                         tmp_path / "m.ingot", check=False)
    assert_clean_failure(proc)
    assert message in proc.stderr and "GRU" in proc.stderr, proc.stderr


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_batch_first_layout(op, tmp_path):
    """layout = 1 (opset 14): X [batch, seq, input], states [batch, dirs,
    hidden], Y [batch, seq, dirs, hidden], Y_h / Y_c [batch, dirs, hidden].
    onnxruntime refuses layout 1, so the reference is onnxruntime on the
    same weights in layout 0, with the inputs and outputs transposed in
    numpy."""
    gates, outputs = (4, ["y", "yh", "yc"]) if op == "LSTM" else \
        (3, ["y", "yh"])
    states = ["h0", "c0"] if op == "LSTM" else ["h0"]
    inits = {"w": w(2, gates * H, I), "r": w(2, gates * H, H),
             "b": w(2, 2 * gates * H)}

    def model(layout, x_shape, s_shape):
        return make_model(
            [node(op, ["x", "w", "r", "b", ""] + states, outputs,
                  hidden_size=H, direction="bidirectional", layout=layout)],
            [("x", F32, x_shape)] + [(n_, F32, s_shape) for n_ in states],
            outputs, inits, 14)

    rng = np.random.default_rng(77)
    feed = {"x": signed(rng, (2, 5, I))}
    feed.update({n_: signed(rng, (2, 2, H)) for n_ in states})
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model(1, [2, 5, I], [2, 2, H]),
                             tmp_path / "m.onnx"), artifact)
    got = run_model(artifact, feed, tmp_path)
    seq_first = {k: v.transpose(1, 0, 2) for k, v in feed.items()}
    want = ort_run(model(0, [5, 2, I], [2, 2, H]), seq_first)
    assert_close(got["y"], want["y"].transpose(2, 0, 1, 3), what="Y")
    for name in outputs[1:]:
        assert_close(got[name], want[name].transpose(1, 0, 2), what=name)
    # All outputs come from one recurrence, not one per output.
    proc = ingot("inspect", artifact, "--json")
    steps = [s["kernel"] for s in json.loads(proc.stdout)["steps"]]
    assert steps.count(op.lower()) == 1, steps
