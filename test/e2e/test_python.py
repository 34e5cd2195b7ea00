"""The `ingot` Python module from the build tree (build/python): Engine
generate/stream/chat against `generate --batch-file`, the GIL released while
the engine works, Artifact.run against onnxruntime, compile() in-process,
and every misuse as a Python exception carrying ingot's message.
"""
import json
import sys
import threading

import numpy as np
import pytest

from ingot_testlib import (BUILD_DIR, SOURCE_DIR, describe, ingot, make_model,
                           node, ort_run, rand, relative_error, save_model,
                           seed_for)

sys.path.insert(0, str(BUILD_DIR / "python"))
sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402
import ingot as ig  # noqa: E402

FLAGS = dict(max_tokens_per_step=16, max_seqs=64, max_context=96, block_size=4)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    out = tmp_path_factory.mktemp("python")
    path = hf_models.make_model("llama", out)
    art = out / "llama.ingot"
    ig.compile(path, art, **FLAGS)  # in-process, the compiler's entry point
    vocab = json.loads((path / "config.json").read_text())["vocab_size"]
    return {"art": art, "dir": path, "work": out, "vocab": vocab}


@pytest.fixture(scope="module")
def engine(model):
    return ig.Engine(model["art"], threads=2)


def batch_tokens(model, prompts, params, max_tokens):
    src, dst = model["work"] / "in.jsonl", model["work"] / "out.jsonl"
    src.write_text("".join(json.dumps(
        {"prompt_tokens": p, "max_new_tokens": max_tokens, "ignore_eos": True,
         **extra}) + "\n" for p, extra in zip(prompts, params)))
    proc = ingot("generate", model["art"], "--batch-file", src, "--output", dst)
    assert proc.returncode == 0, describe(proc)
    return [json.loads(line)["tokens"] for line in dst.read_text().splitlines()]


def prompts_for(model, n, seed):
    rng = np.random.default_rng(seed)
    return [[int(t) for t in rng.integers(3, model["vocab"], size=5 + i % 7)]
            for i in range(n)]


def test_generate_matches_batch_file(model, engine):
    prompts = prompts_for(model, 12, 1)
    extras = [{"temperature": 0.0} if i % 2 == 0 else
              {"temperature": 0.8, "top_p": 0.9, "top_k": 30, "seed": i}
              for i in range(12)]
    params = [ig.SamplingParams(max_tokens=20, ignore_eos=True, **e)
              for e in extras]
    outs = engine.generate(prompts, params)
    assert [o.outputs[0].token_ids for o in outs] == \
        batch_tokens(model, prompts, extras, 20)
    for o, p in zip(outs, prompts):
        assert o.prompt_token_ids == p and o.prompt is None
        assert o.outputs[0].finish_reason == "length"
        assert 0 < o.ttft_ms <= o.e2e_ms


def test_text_prompt_and_stop(engine):
    params = ig.SamplingParams(temperature=0, max_tokens=30, ignore_eos=True)
    out = engine.generate("once upon a time", params)[0]
    assert out.prompt == "once upon a time"
    assert out.prompt_token_ids == engine.encode("once upon a time")
    text = out.outputs[0].text
    assert engine.decode(out.outputs[0].token_ids).startswith(text[:5])
    pair = next(text[i:i + 2] for i in range(3, len(text) - 2)
                if text[i:i + 2].isascii() and text[i:i + 2].isprintable())
    stopped = engine.generate("once upon a time", ig.SamplingParams(
        temperature=0, max_tokens=30, ignore_eos=True, stop=[pair]))[0]
    assert stopped.outputs[0].finish_reason == "stop"
    assert stopped.outputs[0].text == text[:text.index(pair)]


def test_stream_matches_generate_and_cancels_when_dropped(model, engine):
    prompt = prompts_for(model, 1, 2)[0]
    params = ig.SamplingParams(temperature=0.7, seed=5, max_tokens=24,
                               ignore_eos=True, logprobs=2)
    whole = engine.generate([prompt], params)[0].outputs[0]
    pieces = list(engine.stream(prompt, params))
    assert [p.token_id for p in pieces] == whole.token_ids
    assert "".join(p.text for p in pieces) == whole.text
    assert pieces[-1].finished and pieces[-1].finish_reason == "length"
    assert all(p.logprob <= 0 and len(p.top_logprobs) == 2 for p in pieces)
    assert whole.logprobs[0][whole.token_ids[0]] == pieces[0].logprob
    stream = engine.stream(prompt, ig.SamplingParams(max_tokens=90,
                                                     ignore_eos=True))
    next(stream)
    del stream  # dropped early: the request is cancelled
    for _ in range(200):
        if engine.stats()["kv_blocks_used"] == 0:
            break
        threading.Event().wait(0.01)
    assert engine.stats()["kv_blocks_used"] == 0


def test_chat(engine):
    out = engine.chat([{"role": "user", "content": "hi"}],
                      ig.SamplingParams(temperature=0, max_tokens=6))
    assert out.outputs[0].token_ids and out.prompt.startswith("<|im_start|>")


def test_generate_releases_the_gil(model, engine):
    prompts = prompts_for(model, 64, 3)
    params = ig.SamplingParams(temperature=0, max_tokens=80, ignore_eos=True)
    done = threading.Event()
    ticks = 0

    def work():
        engine.generate(prompts, params)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1
    t.join()
    # With the GIL held for the whole call this loop could only run in the
    # interpreter's switch intervals before the call began.
    assert ticks > 10000


def test_engine_errors_are_python_exceptions(model, engine, tmp_path):
    with pytest.raises(ig.Error, match="missing.ingot"):
        ig.Engine(tmp_path / "missing.ingot")
    with pytest.raises(ig.Error, match="cuda"):
        ig.Engine(model["art"], device="cuda")
    with pytest.raises(ValueError, match="top_p"):
        engine.generate([[5, 6]], ig.SamplingParams(top_p=3.0))
    with pytest.raises(ValueError, match="prompt"):
        engine.generate([[5, model["vocab"] + 10]])
    with pytest.raises(ValueError, match="2 sampling params"):
        engine.generate([[5], [6], [7]], [ig.SamplingParams()] * 2)


@pytest.fixture(scope="module")
def onnx_artifact(tmp_path_factory):
    work = tmp_path_factory.mktemp("python-onnx")
    model = make_model(
        [node("MatMul", ["x", "w"], ["y"]), node("Relu", ["y"], ["z"])],
        [("x", np.float32, [2, 8]), ("w", np.float32, [8, 4])], ["z"])
    path = work / "mm.onnx"
    save_model(model, path)
    art = work / "mm.ingot"
    ig.compile(path, art)
    return model, art


def test_artifact_run_matches_onnxruntime(onnx_artifact, request):
    model, art = onnx_artifact
    a = ig.Artifact(art)
    assert a.input_names == ["x", "w"] and a.output_names == ["z"]
    rng = np.random.default_rng(seed_for(request.node.nodeid))
    inputs = {"x": rand(rng, (2, 8)), "w": rand(rng, (8, 4))}
    got = a.run(inputs)["z"]
    want = ort_run(model, inputs)["z"]
    assert got.dtype == np.float32 and got.shape == (2, 4)
    assert relative_error(got, want) < 1e-6


def test_artifact_run_refuses_wrong_inputs(onnx_artifact, model):
    a = ig.Artifact(onnx_artifact[1])
    x, w = np.ones((2, 8), np.float32), np.ones((8, 4), np.float32)
    with pytest.raises(ig.Error, match="'x': expected dtype float32"):
        a.run({"x": x.astype(np.float64), "w": w})
    with pytest.raises(ig.Error, match="x"):
        a.run({"x": np.ones((3, 8), np.float32), "w": w})
    with pytest.raises(ig.Error, match="no input 'nope'"):
        a.run({"nope": x})
    with pytest.raises(ig.Error, match="Engine"):
        ig.Artifact(model["art"]).run({})


def test_compile_errors(model, tmp_path):
    with pytest.raises(TypeError, match="unknown flag 'bogus'"):
        ig.compile(model["dir"], tmp_path / "x.ingot", bogus=1)
    with pytest.raises(ig.Error, match="nothing-here"):
        ig.compile(tmp_path / "nothing-here", tmp_path / "x.ingot")
    assert not (tmp_path / "x.ingot").exists()


def test_kv_cache_dtype_option(model):
    e = ig.Engine(model["art"], kv_cache_dtype="int8")
    out = e.generate([[5, 6, 7]], ig.SamplingParams(max_tokens=5,
                                                    ignore_eos=True))
    assert len(out[0].outputs[0].token_ids) == 5
    with pytest.raises(ig.Error, match="int4"):
        ig.Engine(model["art"], kv_cache_dtype="int4")


def test_external_weights(model, tmp_path):
    """compile(weights="external") writes no weight bytes; an Engine given
    the model directory generates what the embedded artifact generates."""
    art = tmp_path / "external.ingot"
    ig.compile(model["dir"], art, weights="external", **FLAGS)
    assert art.stat().st_size < model["art"].stat().st_size / 4
    params = ig.SamplingParams(max_tokens=6, temperature=0, ignore_eos=True)
    want = ig.Engine(model["art"]).generate([[5, 6, 7]], params)
    got = ig.Engine(art, weights=str(model["dir"])).generate([[5, 6, 7]],
                                                             params)
    assert got[0].outputs[0].token_ids == want[0].outputs[0].token_ids
    with pytest.raises(ig.Error, match="--weights DIR"):
        ig.Engine(art)
    with pytest.raises(ValueError, match="weights='inside'"):
        ig.compile(model["dir"], tmp_path / "y.ingot", weights="inside")


def test_quantised_embedding(model, tmp_path):
    """compile(quant_embed=...) reaches the pass as --quant-embed does: the
    embedding table leaves the artifact in q8, and a bad value is refused
    with the pass's message."""
    art = tmp_path / "q8-embed.ingot"
    ig.compile(model["dir"], art, quant="int8", quant_embed="same", **FLAGS)
    proc = ingot("inspect", art, "--json")
    assert proc.returncode == 0, describe(proc)
    names = {t["name"] for t in json.loads(proc.stdout)["tensors"]}
    assert "model.embed_tokens.weight@q8g32" in names
    assert "model.embed_tokens.weight" not in names
    with pytest.raises(ig.Error, match="embed must be none, same or int8"):
        ig.compile(model["dir"], tmp_path / "z.ingot", quant="int8",
                   quant_embed="int3", **FLAGS)
