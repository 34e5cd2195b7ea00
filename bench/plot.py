#!/usr/bin/env python3
"""The figures of one `ingot bench` serving run, from its --json file.

    .venv/bin/python bench/plot.py bench.json --output bench.png

`ingot bench --plot FILE.png` runs this with the test venv's Python (or
$INGOT_PYTHON). Panels, two per row, 640x420 px each: the CDFs of TTFT,
TPOT, ITL and E2E latency, one curve per concurrency level, and with a
concurrency sweep, output throughput against max concurrency (log x). The
curves are drawn from each run's "samples_ms" (docs/metrics.md).
"""
import argparse
import json
import math
import os
import sys
import tempfile

PANEL_W, PANEL_H, DPI = 640, 420, 100
LATENCIES = [("ttft", "TTFT CDF", "fraction of requests"),
             ("tpot", "TPOT CDF", "fraction of requests"),
             ("itl", "ITL CDF", "fraction of gaps"),
             ("e2e", "E2E CDF", "fraction of requests")]


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def levels(report, path):
    """[(label, run)]: the sweep's levels, else the one run at the top."""
    if "sweep" in report:
        runs = [(r["max_concurrency"], r) for r in report["sweep"]]
    else:
        limits = report.get("config", {}).get("max_concurrency") or [0]
        runs = [(limits[-1], report)]
    for _, run in runs:
        if "samples_ms" not in run:
            fail(f"{path}: no 'samples_ms' in the report; it must come from "
                 "`ingot bench` in serving mode (not --pp/--tg)")
    return [(f"concurrency {c}" if c else "all at once", run)
            for c, run in runs]


def cdf(values):
    xs = sorted(v for v in values if v is not None and math.isfinite(v))
    return xs, [(i + 1) / len(xs) for i in range(len(xs))]


def draw(report, path, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail(f"bench/plot.py needs matplotlib: run {sys.executable} -m pip "
             "install matplotlib")
    runs = levels(report, path)
    panels = len(LATENCIES) + (len(runs) > 1)
    rows = (panels + 1) // 2
    fig, axes = plt.subplots(rows, 2, squeeze=False,
                             figsize=(2 * PANEL_W / DPI, rows * PANEL_H / DPI),
                             dpi=DPI)
    axes = axes.flatten()
    for ax, (key, title, ylabel) in zip(axes, LATENCIES):
        for label, run in runs:
            xs, ys = cdf(run["samples_ms"][key])
            ax.plot(xs, ys, marker=".", label=label)
        ax.set(title=title, xlabel="ms", ylabel=ylabel, ylim=(0, 1.02))
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    if len(runs) > 1:
        ax = axes[len(LATENCIES)]
        points = [(run["max_concurrency"], run["output_throughput"])
                  for _, run in runs if run["output_throughput"] is not None]
        ax.plot([c for c, _ in points], [t for _, t in points], marker="o",
                label="output tokens/s")
        ax.set(title="throughput vs concurrency", xlabel="max concurrency",
               ylabel="output tokens/s", xscale="log")
        # The levels themselves as ticks, not powers of ten.
        ax.set_xticks([c for c, _ in points], [str(c) for c, _ in points])
        ax.minorticks_off()
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    for ax in axes[panels:]:
        ax.set_visible(False)
    fig.tight_layout()
    # Written beside the target and renamed: never a half-written PNG.
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(suffix=".png",
                                   dir=os.path.dirname(os.path.abspath(out)))
        os.close(fd)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as a plain open() would: not 0600
        fig.savefig(tmp, format="png", dpi=DPI)
        os.replace(tmp, out)
    except OSError as e:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        fail(f"--output {out}: {e.strerror or e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", help="JSON written by `ingot bench --json`")
    parser.add_argument("--output", "-o", required=True, help="PNG to write")
    args = parser.parse_args()
    try:
        with open(args.report, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        fail(f"{args.report}: {e.strerror}")
    except ValueError as e:
        fail(f"{args.report}: not JSON ({e})")
    if not isinstance(report, dict):
        fail(f"{args.report}: expected a JSON object")
    draw(report, args.report, args.output)


if __name__ == "__main__":
    main()
