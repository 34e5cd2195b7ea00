"""Corpus CNNs quantised by onnxruntime's static quantiser (QOperator
format: QLinearConv, QLinear* contrib ops, uint8 activations, per-channel
int8 weights), compiled by ingot and compared with onnxruntime on the same
quantised model: outputs (max abs difference) and median ms per run at
--threads (a benchmark, not a test: figures are ratios from one run).

    .venv/bin/python bench/quantized_onnx.py [--threads 2] [--repeat 20]

Needs the corpus cache (scripts/onnx_corpus.py fetch) and build/bin/ingot.
"""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                      QuantType, quantize_static)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import onnx_corpus  # noqa: E402

# corpus key, model file, input shape, ingot compile flags
MODELS = [
    ("nudenet-320n", "320n.onnx", (1, 3, 320, 320), []),
    ("oww-embedding", "embedding_model.onnx", (1, 76, 32, 1),
     ["--shape", "input_1=1x76x32x1"]),
]


class Calibration(CalibrationDataReader):
    def __init__(self, name, shape, rng):
        self.batches = iter([{name: rng.uniform(0, 1, shape).astype(
            np.float32)} for _ in range(4)])

    def get_next(self):
        return next(self.batches, None)


def ort_ms(path, feed, threads, repeat):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(str(path), opts,
                             providers=["CPUExecutionProvider"])
    outs = dict(zip([o.name for o in s.get_outputs()], s.run(None, feed)))
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        s.run(None, feed)
        times.append((time.perf_counter() - t) * 1e3)
    return outs, float(np.median(times))


def bench(key, member, shape, flags, work, threads, repeat):
    src = onnx_corpus.CACHE / "models" / key / member
    name = onnx.load(str(src)).graph.input[0].name
    rng = np.random.default_rng(0)
    q = work / f"{key}.q.onnx"
    quantize_static(str(src), str(q), Calibration(name, shape, rng),
                    quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=True)
    art = work / f"{key}.q.ingot"
    t = time.perf_counter()
    subprocess.run([str(ROOT / "build/bin/ingot"), "compile", str(q), "-o",
                    str(art)] + flags, check=True)
    compile_s = time.perf_counter() - t
    feed = {name: rng.uniform(0, 1, shape).astype(np.float32)}
    want, ort_time = ort_ms(q, feed, threads, repeat)
    got, ingot_time = onnx_corpus.run_ingot(art, feed, work, threads, repeat)
    diff = max(float(np.abs(got[k].astype(np.float64) - w).max())
               for k, w in want.items())
    ops = {n.op_type for n in onnx.load(str(q)).graph.node}
    print(f"| {key} (QOperator int8) | {len(ops)} op types | "
          f"{compile_s:.1f} s | max abs diff {diff:.3g} | "
          f"ORT {ort_time:.2f} ms | ingot {ingot_time:.2f} ms | "
          f"ingot/ORT speed {ort_time / ingot_time:.2f}x |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=20)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for key, member, shape, flags in MODELS:
            bench(key, member, shape, flags, Path(d), a.threads, a.repeat)


if __name__ == "__main__":
    main()
