"""The peer beside gpu_check_bench.py: Hugging Face transformers on the GPU.

The real slice's weights cannot travel as float32 (the 64 MiB limit), so
the peer is a LlamaForCausalLM of the slice's exact config (config.json
beside each PREPARED/real/*.ingot) with random weights: the same shapes,
so the same FLOPs; it reads float32 or bfloat16 weights where ingot reads
Q4_1 ones. Prefill of 512 tokens and greedy decode of 128 tokens at batch
1, eager PyTorch as users run `generate`, each the median of 3 after a
warm-up, timed with a device synchronise. Figures, not assertions.

    python3 scripts/gpu_check_peer.py PREPARED_DIR OUT_DIR
"""
import json
import sys
import time
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def median_s(fn, repeat=3):
    fn()
    times = []
    for _ in range(repeat):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def measure(config_path, dtype):
    torch.manual_seed(0)
    config = LlamaConfig(**json.loads(Path(config_path).read_text()))
    model = LlamaForCausalLM(config).to("cuda", dtype).eval()
    prompt = torch.randint(3, config.vocab_size, (1, 512), device="cuda")
    with torch.inference_mode():
        pp = median_s(lambda: model(prompt))

        def decode(n):
            return lambda: model.generate(
                prompt[:, :8], max_new_tokens=n, min_new_tokens=n,
                do_sample=False, pad_token_id=0)
        one, many = median_s(decode(1)), median_s(decode(129))
    return {"dtype": str(dtype).removeprefix("torch."),
            "pp512_tok_s": 512 / pp, "tg128_tok_s": 128 / (many - one)}


def main(argv):
    prepared, out = Path(argv[1]), Path(argv[2])
    rows = []
    for config in sorted((prepared / "real").glob("*.config.json")):
        for dtype in (torch.float32, torch.bfloat16):
            row = {"model": config.name.removesuffix(".config.json"),
                   "peer": f"transformers {__import__('transformers').__version__}"
                           f", torch {torch.__version__}"}
            row.update(measure(config, dtype))
            print(json.dumps(row), flush=True)
            rows.append(row)
    (out / "gpu-check-peer.json").write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
