"""The KV-cache block layout: chosen by the compiler per target, recorded in
the artifact, overridable with `ingot compile --kv-layout`, and invisible in
the results. The cpu target picks "block,head,token,dim"; the same model
compiled with "block,token,head,dim" must give the same greedy tokens and
bitwise the same logits (the attention kernel keeps every summation order
across layouts), over chunked prefill, several blocks and decode steps.
"""
import json
import sys

import numpy as np
import pytest

from ingot_testlib import SOURCE_DIR, describe, ingot

sys.path.insert(0, str(SOURCE_DIR / "test" / "fixtures"))
import hf_models  # noqa: E402

# Small step limits: chunked prefill (8 tokens a step) over 4-token blocks.
COMPILE_FLAGS = ["--max-tokens-per-step", "8", "--max-seqs", "4",
                 "--max-context", "64", "--block-size", "4"]
CPU_DEFAULT = "block,head,token,dim"
LAYOUTS = {"default": None, "bthd": "block,token,head,dim",
           "bhtd": "block,head,token,dim"}
# llama: GQA 4/2 heads; mistral: a sliding window of 8 across blocks.
MODELS = ["llama", "mistral"]


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    root = tmp_path_factory.mktemp("kv_layout")
    built = {}
    for model in MODELS:
        path = hf_models.make_model(model, root / "hf")
        for key, layout in LAYOUTS.items():
            art = root / f"{model}-{key}.ingot"
            flags = [f"--kv-layout={layout}"] if layout else []
            proc = ingot("compile", path, "-o", art, *COMPILE_FLAGS, *flags,
                         timeout=300)
            assert proc.returncode == 0, describe(proc)
            built[model, key] = art
    return built


def inspect_json(art):
    proc = ingot("inspect", art, "--json")
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)


def generate(art, prompt, tmp_path, new_tokens):
    logits = tmp_path / "logits.npy"
    proc = ingot("generate", art, "--json", "--prompt-tokens",
                 ",".join(map(str, prompt)), "--max-new-tokens",
                 str(new_tokens), "--temperature", "0", "--logits-out", logits,
                 timeout=300)
    assert proc.returncode == 0, describe(proc)
    return json.loads(proc.stdout)["tokens"], np.load(logits)


@pytest.mark.parametrize("model", MODELS)
def test_inspect_records_the_layout(model, artifacts):
    for key, layout in LAYOUTS.items():
        llm = inspect_json(artifacts[model, key])["llm"]
        assert llm["kv_layout"] == (layout or CPU_DEFAULT), (key, llm)
        assert llm["block_size"] == 4
    text = ingot("inspect", artifacts[model, "bthd"])
    assert text.returncode == 0, describe(text)
    assert "layout block,token,head,dim" in text.stdout


@pytest.mark.parametrize("model", MODELS)
def test_layouts_give_the_same_tokens_and_logits(model, artifacts, tmp_path):
    """Greedy tokens, then the logits after prompts that end at different
    places in a block (prefill reading what earlier chunks wrote)."""
    prompt = [5, 17, 42, 9, 77, 31, 8, 12, 64, 3, 21]
    runs = {key: generate(artifacts[model, key], prompt, tmp_path, 24)
            for key in LAYOUTS}
    tokens, logits = runs["bthd"]
    assert len(tokens) > 0
    for key, (t, lg) in runs.items():
        assert t == tokens, f"{key}: greedy tokens differ"
        assert lg.tobytes() == logits.tobytes(), f"{key}: logits differ"
    for extra in (1, 6, 13):
        longer = prompt + tokens[:extra]
        _, a = generate(artifacts[model, "bthd"], longer, tmp_path, 1)
        _, b = generate(artifacts[model, "default"], longer, tmp_path, 1)
        assert a.tobytes() == b.tobytes(), f"logits differ after +{extra}"


def test_unknown_layout_is_a_clear_compile_error(tmp_path):
    path = hf_models.make_model("llama", tmp_path / "hf")
    proc = ingot("compile", path, "-o", tmp_path / "x.ingot",
                 "--kv-layout=foo", *COMPILE_FLAGS)
    assert proc.returncode == 2, describe(proc)
    assert ("--kv-layout 'foo' is not a KV-cache layout; known: "
            "'block,token,head,dim', 'block,head,token,dim'") in proc.stderr
    assert not (tmp_path / "x.ingot").exists()
