#!/usr/bin/env python3
"""Two ingot binaries on corpus models, alternating, beside onnxruntime.

Each binary compiles the model into its own artifact (a compiler change
shows too), then the rounds alternate old, new and onnxruntime, each a
median of --repeat runs on --threads threads. On a shared VM whose speed
moves by 10% from minute to minute, the win count (rounds in which the new
binary beat the old one) says more than either median.

    .venv/bin/python bench/corpus_ab.py /tmp/ingot.old --rounds 7 nudenet ppocr

The new binary is build/bin/ingot (or --new); models are matched by
substring of their corpus key (scripts/onnx_corpus_entries.py). Not a test.
"""
import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import onnx_corpus as oc  # noqa: E402
import onnxruntime as ort  # noqa: E402


def with_binary(binary, fn, *args):
    """fn(*args) with onnx_corpus pointed at `binary`."""
    saved = oc.ingot_bin
    oc.ingot_bin = lambda: binary
    try:
        return fn(*args)
    finally:
        oc.ingot_bin = saved


def compare(entry, old, new, rounds, repeat, threads):
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        for key, binary in (("old", old), ("new", new)):
            p = with_binary(binary, oc.compile_entry, entry,
                            work / f"{key}.ingot")
            if p.returncode != 0:
                sys.exit(f"{binary} compile {entry.key} failed:\n{p.stderr}")
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        sess = ort.InferenceSession(str(oc.model_path(entry)), so,
                                    providers=["CPUExecutionProvider"])
        feeds = oc.random_inputs(sess, entry.shapes, seed=1,
                                 values=entry.values)
        want = sess.run(None, feeds)
        got, _ = with_binary(new, oc.run_ingot, work / "new.ingot", feeds,
                             work, threads)
        err = max(oc.relative_error(got[oc.output_file_stem(o.name)], w,
                                    entry.scale_floor)
                  for o, w in zip(sess.get_outputs(), want))
        times = {"old": [], "new": [], "ort": []}
        for _ in range(rounds):
            for key, binary in (("old", old), ("new", new)):
                times[key].append(with_binary(
                    binary, oc.run_ingot, work / f"{key}.ingot", feeds, work,
                    threads, repeat)[1])
            times["ort"].append(oc.ort_median(sess, feeds, repeat))
    med = {k: statistics.median(v) for k, v in times.items()}
    wins = sum(n < o for n, o in zip(times["new"], times["old"]))
    print(f"{entry.key:22s} err {err:.1e}  old {med['old']:8.3f}  "
          f"new {med['new']:8.3f} ms  {med['old'] / med['new']:.2f}x "
          f"({wins}/{rounds} wins)  ort {med['ort']:8.3f}  "
          f"ORT/new {med['ort'] / med['new']:.2f}  "
          f"ORT/old {med['ort'] / med['old']:.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="the ingot binary to compare with")
    ap.add_argument("models", nargs="*", help="corpus keys (substrings)")
    ap.add_argument("--new", type=Path, default=None,
                    help="default: build/bin/ingot")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_intermixed_args()
    new = args.new or oc.ingot_bin()
    for binary in (args.old, new):
        if not binary.is_file():
            sys.exit(f"corpus_ab: {binary}: no such ingot binary")
    for entry in oc.ENTRIES:
        if args.models and not any(m in entry.key for m in args.models):
            continue
        compare(entry, args.old, new, args.rounds, args.repeat, args.threads)


if __name__ == "__main__":
    main()
