"""Cross-checks the float64 numpy reference (test/fixtures/hf_reference.py)
against Hugging Face transformers on the tiny test models.

The end-to-end tests hold ingot to hf_reference.py; this script holds
hf_reference.py to transformers, for the architectures whose reference was
written from transformers' modelling code. It needs torch and transformers,
which the test venv does not carry (a CPU-only machine gets them with
`pip install torch transformers safetensors` into a scratch venv):

    python scripts/check_reference_with_transformers.py [--out FILE.md]

Both run in float64 (transformers' RMSNorms compute in float32 inside, so
agreement is ~1e-7, not 1e-15); a wrong convention moves logits by 1e-2 or
more. Exits 1 if any model differs by more than 1e-5.
"""
import argparse
import json
import platform
import sys
import tempfile
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parents[1] / "test" / "fixtures"
sys.path.insert(0, str(FIXTURES))
import hf_models  # noqa: E402
import hf_reference  # noqa: E402

PROMPT = [5, 9, 14, 3, 22, 7, 8, 1, 2, 33, 44, 55, 66, 11, 12, 13, 14, 15, 16]
BOUND = 1e-5


def transformers_logits(model_dir):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained(model_dir)
    # Phi-3's config class defaults pad_token_id to 32000, past a tiny
    # vocabulary; padding plays no part in these logits.
    if getattr(config, "pad_token_id", None) is not None and \
            config.pad_token_id >= config.vocab_size:
        config.pad_token_id = None
    model = AutoModelForCausalLM.from_pretrained(
        model_dir, config=config, dtype=torch.float64,
        attn_implementation="eager").eval()
    with torch.no_grad():
        return model(torch.tensor([PROMPT])).logits[0].numpy()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    import torch
    import transformers
    rows, worst = [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in hf_models.CASES:
            d = hf_models.make_model(name, tmp)
            ref = hf_reference.load(d).logits(PROMPT)
            got = transformers_logits(d)
            err = float(np.abs(got - ref).max() / np.abs(ref).max())
            worst = max(worst, err)
            arch = json.loads((d / "config.json").read_text())["architectures"][0]
            rows.append(f"| {name} | {arch} | {err:.2e} |")
            print(rows[-1], flush=True)
    text = "\n".join([
        "# hf_reference.py against transformers on the tiny models",
        "",
        "```",
        "python scripts/check_reference_with_transformers.py"
        + (f" --out {args.out}" if args.out else ""),
        "```",
        "",
        f"transformers {transformers.__version__}, torch {torch.__version__}, "
        f"Python {platform.python_version()}, {platform.machine()}; both in float64, "
        f"logits of a {len(PROMPT)}-token prompt at every position; "
        "max |transformers - reference| / max |reference|.",
        "",
        "| case | architecture | relative difference |",
        "|---|---|---:|",
        *rows, ""])
    if args.out:
        args.out.write_text(text)
    print(f"worst {worst:.2e} (bound {BOUND})")
    return 0 if worst <= BOUND else 1


if __name__ == "__main__":
    sys.exit(main())
