"""Results sized at run time: sizes set by tensor values (Range's limit,
Tile's repeats, Resize's run-time scales or sizes, Pad's run-time pads),
and sizes that only agree at run time (two symbols broadcast together),
have no compiled bound. The compiler leaves them out of the arena and the
runtime allocates each when its kernel sets the shape. Every case compiles
once and runs at several values, compared with onnxruntime on fresh random
data (f32 within the shared relative tolerance, integers exact).
"""
import numpy as np

from ingot_testlib import (assert_clean_failure, check_against_ort,
                           compile_model, ingot, make_model, node, run_model,
                           save_model, seed_for)

F32, I64 = np.float32, np.int64


def rng_for(request):
    return np.random.default_rng(seed_for(request.node.nodeid))


def test_range_limit_is_run_time_data(tmp_path, request):
    """One artifact, limits that grow and shrink (the storage is reused
    and regrown), and an empty result; what reads the Range is sized at run
    time too."""
    model = make_model([node("Range", ["a", "b", "d"], ["r"]),
                        node("Mul", ["r", "r"], ["y"])],
                       [("b", I64, [])], [("y", I64, [None])],
                       {"a": np.array(0, I64), "d": np.array(1, I64)}, 13,
                       check=False)
    rng = rng_for(request)
    limits = [int(rng.integers(3, 9)), int(rng.integers(100, 400)), 2, 0]
    check_against_ort(model, [{"b": np.array(v, I64)} for v in limits],
                      tmp_path)
    inspect = ingot("inspect", tmp_path / "model.ingot")
    assert "sized at run time" in inspect.stdout, inspect.stdout


def test_range_too_large_fails_naming_the_node(tmp_path):
    """A limit whose result is more than the machine's memory is refused
    at run time, naming the node, before anything is allocated."""
    model = make_model([node("Range", ["a", "b", "d"], ["y"])],
                       [("b", I64, [])], [("y", I64, [None])],
                       {"a": np.array(0, I64), "d": np.array(1, I64)}, 13,
                       check=False)
    path = save_model(model, tmp_path / "model.onnx")
    compile_model(path, tmp_path / "m.ingot")
    proc = run_model(tmp_path / "m.ingot", {"b": np.array(1 << 60, I64)},
                     tmp_path, check=False)
    assert_clean_failure(proc)
    assert "range_y" in proc.stderr, proc.stderr
    assert "physical memory" in proc.stderr, proc.stderr


def test_tile_repeats_are_run_time_data(tmp_path, request):
    rng = rng_for(request)
    model = make_model([node("Tile", ["x", "reps"], ["y"])],
                       [("x", F32, [2, 3]), ("reps", I64, [2])], ["y"], {},
                       13)
    check_against_ort(model, [{"x": rng.standard_normal((2, 3)).astype(F32),
                               "reps": np.array(r, I64)}
                              for r in ([1, 1], [3, 2], [2, 5], [0, 2])],
                      tmp_path)


def resize_model(mode, by, opset=19, **attrs):
    target = ["", "scales", ""] if by == "scales" else ["", "", "sizes"]
    shape = [2] if "axes" in attrs else [4]
    dtype = F32 if by == "scales" else I64
    return make_model([node("Resize", ["x"] + target, ["y"], mode=mode,
                            **attrs)],
                      [("x", F32, [1, 2, 5, 7]), (by, dtype, shape)], ["y"],
                      {}, opset)


def test_resize_scales_are_run_time_data(tmp_path, request):
    """Up, down and mixed scales from one artifact per mode; each run picks
    other scales, so the output grows and shrinks."""
    rng = rng_for(request)
    for mode in ["nearest", "linear", "cubic"]:
        work = tmp_path / mode
        work.mkdir()
        sets = []
        for s in [(2.0, 1.5), (0.5, 0.75), (1.25, 3.0)]:
            sets.append({"x": rng.standard_normal((1, 2, 5, 7)).astype(F32),
                         "scales": np.array([1, 1, *s], F32)})
        check_against_ort(resize_model(mode, "scales"), sets, work)


def test_resize_sizes_and_axes_are_run_time_data(tmp_path, request):
    rng = rng_for(request)
    x = lambda: rng.standard_normal((1, 2, 5, 7)).astype(F32)
    cases = [
        ("linear", {}, [[1, 2, 9, 4], [1, 2, 3, 11]]),
        ("nearest", {"axes": [3, 2]}, [[10, 4], [3, 12]]),
        ("nearest", {"axes": [2, 3], "keep_aspect_ratio_policy":
                     "not_larger"}, [[8, 20], [3, 3]]),
        ("linear", {"axes": [2, 3], "keep_aspect_ratio_policy":
                    "not_smaller"}, [[8, 20], [2, 9]]),
    ]
    for i, (mode, attrs, sizes) in enumerate(cases):
        work = tmp_path / f"case{i}"
        work.mkdir()
        check_against_ort(resize_model(mode, "sizes", **attrs),
                          [{"x": x(), "sizes": np.array(s, I64)}
                           for s in sizes], work)


def test_pad_axes_with_run_time_pads(tmp_path, request):
    """Pads for some axes only (opset 18), as a run-time input: spread over
    every dim at run time by a Gather."""
    rng = rng_for(request)
    model = make_model([node("Pad", ["x", "pads", "", "axes"], ["y"],
                             mode="constant")],
                       [("x", F32, [3, 4, 5]), ("pads", I64, [4])], ["y"],
                       {"axes": np.array([2, 0], I64)}, 18)
    check_against_ort(model, [{"x": rng.standard_normal((3, 4, 5))
                               .astype(F32),
                               "pads": np.array(p, I64)}
                              for p in ([1, 2, 3, 0], [0, 0, 0, 0],
                                        [4, 1, 0, 5])], tmp_path)


def test_pad_axes_are_run_time_data(tmp_path, request):
    """Axes fed as an input too (int32, negative ones): the pads are
    scattered over every dim when the plan runs; edge mode."""
    rng = rng_for(request)
    model = make_model([node("Pad", ["x", "pads", "", "axes"], ["y"],
                             mode="edge")],
                       [("x", F32, [3, 4, 5]), ("pads", I64, [4]),
                        ("axes", np.int32, [2])], [("y", F32, [None] * 3)],
                       opset=18, check=False)
    check_against_ort(model, [{"x": rng.standard_normal((3, 4, 5))
                               .astype(F32),
                               "pads": np.array(p, I64),
                               "axes": np.array(a, np.int32)}
                              for p, a in (([1, 2, 3, 0], [2, 0]),
                                           ([0, 1, 2, 2], [-1, 1]),
                                           ([2, 0, 0, 1], [0, -2]))],
                      tmp_path)


def test_symbols_that_only_agree_at_run_time(tmp_path, request):
    """Each input dim its own symbol: at their maxima the broadcast is
    impossible, so the compile warns (naming the symbols and --max-dim) and
    sizes the sum at run time, where the real dims agree."""
    rng = rng_for(request)
    model = make_model([node("Add", ["a", "b"], ["s"]),
                        node("Relu", ["s"], ["y"])],
                       [("a", F32, ["n", 3]), ("b", F32, ["m", 1])],
                       [("y", F32, [None, 3])], {}, 17, check=False)
    path = save_model(model, tmp_path / "model.onnx")
    proc = compile_model(path, tmp_path / "model.ingot", "--max-dim", "n=64",
                         "--max-dim", "m=8")
    assert "sized at run time" in proc.stderr, proc.stderr
    assert "--max-dim" in proc.stderr, proc.stderr
    sets = [{"a": rng.standard_normal((k, 3)).astype(F32),
             "b": rng.standard_normal((k, 1)).astype(F32)} for k in (5, 8)]
    check_against_ort(model, sets, tmp_path,
                      ("--max-dim", "n=64", "--max-dim", "m=8"))
    bad = run_model(tmp_path / "model.ingot",
                    {"a": np.ones((4, 3), F32), "b": np.ones((3, 1), F32)},
                    tmp_path, check=False)
    assert_clean_failure(bad)
    assert "cannot broadcast shapes [4,3] [3,1]" in bad.stderr, bad.stderr


def test_conv_weights_fed_as_inputs_with_symbolic_dims(tmp_path, request):
    """A Conv weight given as a graph input of symbolic shape: kernel_shape
    sizes the result at compile time and the kernel checks the real weight
    against it; a ConvTranspose without kernel_shape sizes its result at run
    time from the weight it gets."""
    rng = rng_for(request)
    conv = make_model([node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3],
                            pads=[1, 0, 1, 2], strides=[1, 2])],
                      [("x", F32, [1, 4, 9, 8]), ("w", F32, ["m", "c", "k1",
                                                             "k2"])],
                      [("y", F32, [1, None, None, None])], {}, 17,
                      check=False)
    sets = [{"x": rng.standard_normal((1, 4, 9, 8)).astype(F32),
             "w": rng.standard_normal((m, 4, 3, 3)).astype(F32)}
            for m in (2, 5)]
    (tmp_path / "conv").mkdir()
    check_against_ort(conv, sets, tmp_path / "conv")
    bad = run_model(tmp_path / "conv" / "model.ingot",
                    {"x": sets[0]["x"],
                     "w": np.ones((2, 4, 2, 3), F32)}, tmp_path, check=False)
    assert_clean_failure(bad)
    assert "does not match kernel_shape" in bad.stderr, bad.stderr

    tconv = make_model([node("ConvTranspose", ["x", "w"], ["y"],
                             strides=[2, 1], group=2)],
                       [("x", F32, [1, 4, 5, 6]), ("w", F32, ["c", "m", "k1",
                                                              "k2"])],
                       [("y", F32, [1, None, None, None])], {}, 17,
                       check=False)
    sets = [{"x": rng.standard_normal((1, 4, 5, 6)).astype(F32),
             "w": rng.standard_normal((4, m, k, k)).astype(F32)}
            for m, k in ((1, 3), (3, 2))]
    (tmp_path / "tconv").mkdir()
    check_against_ort(tconv, sets, tmp_path / "tconv")


def test_unsqueeze_and_squeeze_axes_are_run_time_data(tmp_path, request):
    """Unsqueeze then Squeeze with axes fed as inputs (lengths known, values
    not): one artifact at several axis sets, negative and unsorted ones
    included, against onnxruntime; the result's dims are computed by the
    plan."""
    model = make_model([node("Unsqueeze", ["x", "ua"], ["u"]),
                        node("Relu", ["u"], ["y"]),
                        node("Squeeze", ["u", "sa"], ["z"])],
                       [("x", F32, [3, 4, 5]), ("ua", I64, [2]),
                        ("sa", I64, [1])],
                       [("y", F32, [None] * 5), ("z", F32, [None] * 4)],
                       opset=13, check=False)
    rng = rng_for(request)
    feeds = []
    for ua, sa in (([0, 4], [0]), ([-1, 1], [1]), ([3, -5], [-2]),
                   ([2, 1], [2])):
        feeds.append({"x": rng.standard_normal((3, 4, 5)).astype(F32),
                      "ua": np.array(ua, I64), "sa": np.array(sa, I64)})
    check_against_ort(model, feeds, tmp_path)


def test_run_time_axes_naming_no_unit_dim_fail_the_run(tmp_path):
    """Squeezing a dim that is not 1, or a repeated Unsqueeze axis, fails
    the run by name instead of giving a wrong shape."""
    model = make_model([node("Squeeze", ["x", "a"], ["y"])],
                       [("x", F32, [3, 1, 5]), ("a", I64, [1])],
                       [("y", F32, [None, None])], opset=13, check=False)
    artifact = tmp_path / "m.ingot"
    compile_model(save_model(model, tmp_path / "m.onnx"), artifact)
    ok = run_model(artifact, {"x": np.ones((3, 1, 5), F32),
                              "a": np.array([1], I64)}, tmp_path)
    assert ok["y"].shape == (3, 5)
    proc = run_model(artifact, {"x": np.ones((3, 1, 5), F32),
                                "a": np.array([0], I64)}, tmp_path,
                     check=False)
    assert_clean_failure(proc)
    assert "node 'squeeze_y'" in proc.stderr, proc.stderr
    model = make_model([node("Unsqueeze", ["x", "a"], ["y"])],
                       [("x", F32, [3, 5]), ("a", I64, [2])],
                       [("y", F32, [None] * 4)], opset=13, check=False)
    compile_model(save_model(model, tmp_path / "u.onnx"), artifact)
    proc = run_model(artifact, {"x": np.ones((3, 5), F32),
                                "a": np.array([1, 1], I64)}, tmp_path,
                     check=False)
    assert_clean_failure(proc)
    assert "node 'unsqueeze_y'" in proc.stderr, proc.stderr
