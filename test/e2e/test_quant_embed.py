"""`ingot compile --quant-embed`: embedding tables in a quantised format.

By default the embedding stays as the source stores it (the peers'
default). With `--quant-embed same|int8` the table the gather reads is
quantised too, and a tied table asked for in the lm_head's format is stored
once for both readers, as a GGUF file stores it: on SmolLM2-135M that drops
the f32 table (113 MB) and the lm_head's q8 copy (28 MB) for one 30 MB q8
table.
"""
import pytest

from ingot_testlib import describe, ingot
from quant_testlib import (COMPILE_FLAGS, Artifact, compiled,  # noqa: F401
                           dequantised_reference, hf_models, hf_reference, models)
from test_quant_models import (DEQUANT_RTOL, ORIGINAL_RTOL, ingot_logits,
                               random_prompt, relative_error)

EMBED = "model.embed_tokens.weight"


def embedding_tables(art):
    """(name, format, group) of every tensor made from the embedding alone."""
    return sorted((t["name"], fmt, group) for t, parts, fmt, group in art.quantised()
                  if parts == [EMBED])


@pytest.mark.parametrize("name", ["llama", "llama_tied_bf16"])
def test_default_keeps_the_embedding(name, compiled):
    art = compiled(name, "--quant", "int8")
    names = {t["name"] for t in art.info["tensors"]}
    assert EMBED in names
    tied = name == "llama_tied_bf16"
    assert embedding_tables(art) == ([(EMBED + "@q8g32", "q8", 32)] if tied else [])
    assert art.info["embedding"] == {"tensor": EMBED,
                                     "format": "bfloat16" if tied else "float32",
                                     "shared_with_lm_head": False}


def test_tied_table_is_stored_once(compiled):
    plain = compiled("llama_tied_bf16", "--quant", "int8")
    art = compiled("llama_tied_bf16", "--quant", "int8", "--quant-embed", "same")
    assert embedding_tables(art) == [(EMBED + "@q8g32", "q8", 32)]
    assert art.info["lm_head"]["tensor"] == EMBED + "@q8g32"
    assert art.info["embedding"] == {"tensor": EMBED + "@q8g32", "format": "q8",
                                     "group_size": 32, "shared_with_lm_head": True}
    text = ingot("inspect", art.path).stdout
    assert "embedding q8, group 32 (quantised, shared with the lm_head)" in text
    assert EMBED not in {t["name"] for t in art.info["tensors"]}
    # The bf16 table is gone; nothing took its place.
    table = next(t for t in plain.info["tensors"] if t["name"] == EMBED)
    assert len(plain.data) - len(art.data) >= table["bytes"] - 4096


def test_int4_gather_and_lm_head_take_their_own_formats(compiled):
    # int4 keeps the lm_head at q8 by default; the gather takes q4m.
    art = compiled("llama_tied_bf16", "--quant", "int4", "--quant-embed", "same")
    assert embedding_tables(art) == [(EMBED + "@q4mg32", "q4m", 32),
                                     (EMBED + "@q8g32", "q8", 32)]
    assert art.info["embedding"]["format"] == "q4m"
    assert not art.info["embedding"]["shared_with_lm_head"]
    both = compiled("llama_tied_bf16", "--quant", "int4", "--quant-embed", "int8")
    assert embedding_tables(both) == [(EMBED + "@q8g32", "q8", 32)]


def test_exclude_keeps_the_table(compiled):
    art = compiled("llama", "--quant", "int8", "--quant-embed", "same",
                   "--quant-exclude", "*embed*")
    assert embedding_tables(art) == []


@pytest.mark.parametrize("name, flags, fmt", [
    ("llama", ["--quant", "int8", "--quant-embed", "same"], "q8"),
    ("llama_tied_bf16", ["--quant", "int8", "--quant-embed", "same"], "q8"),
    ("llama_tied_bf16", ["--quant", "int4", "--quant-embed", "same"], "q4m"),
    ("qwen2", ["--quant", "int8", "--group-size", "0", "--quant-embed", "int8"], "q8"),
])
def test_logits_match_the_dequantised_reference(name, flags, fmt, compiled, models,
                                                tmp_path):
    """The gather reads the quantised rows: against the float64 reference
    whose embedding is the dequantised table, only f32 rounding is left
    (test_quant_models.py's bound); against the original weights, the
    format's own error."""
    art = compiled(name, *flags)
    assert embedding_tables(art), "the embedding was not quantised"
    prompt = random_prompt(art, name + "".join(flags))
    actual = ingot_logits(art, prompt, tmp_path)
    exact = dequantised_reference(models[name], art, embedding_quantised=True)
    err = relative_error(actual, exact.logits(prompt)[-1])
    kept = relative_error(actual, dequantised_reference(models[name], art).logits(prompt)[-1])
    original = relative_error(actual, hf_reference.load(models[name]).logits(prompt)[-1])
    print(f"{name} {flags}: dequantised {err:.3g}, with the original table "
          f"{kept:.3g}, original {original:.3g}")
    assert err < DEQUANT_RTOL
    # The quantised rows do reach the output: the reference that keeps the
    # original table is off by far more than rounding.
    assert kept > 10 * DEQUANT_RTOL
    assert original < ORIGINAL_RTOL[fmt]


@pytest.mark.parametrize("flags", [["--quant", "int8", "--quant-embed", "same"],
                                   ["--quant", "int4", "--quant-embed", "same"]])
def test_gemma_scaled_bf16_table(flags, tmp_path):
    """Gemma's tied BF16 table, whose rows are scaled by sqrt(hidden) after
    the gather: the rewired f32 rows feed that scaling as they fed the
    cast before."""
    model = hf_models.make_model("gemma3", tmp_path)
    out = tmp_path / "g.ingot"
    proc = ingot("compile", model, "-o", out, *COMPILE_FLAGS, *flags, timeout=300)
    assert proc.returncode == 0, describe(proc)
    art = Artifact(out)
    assert embedding_tables(art)
    prompt = [5, 9, 14, 3, 22, 7, 11, 30]
    actual = ingot_logits(art, prompt, tmp_path)
    exact = dequantised_reference(model, art, embedding_quantised=True).logits(prompt)[-1]
    assert relative_error(actual, exact) < DEQUANT_RTOL


@pytest.mark.parametrize("flags, message", [
    (["--quant", "int8", "--quant-embed", "int3"], "--quant-embed"),
    (["--quant-embed", "same"], "--quant-embed same needs --quant int8, int4 or fp8"),
])
def test_bad_flags_are_refused(flags, message, models, tmp_path):
    proc = ingot("compile", models["llama"], "-o", tmp_path / "m.ingot", *flags)
    assert proc.returncode == 2, describe(proc)
    assert message in proc.stderr
    assert not (tmp_path / "m.ingot").exists()
