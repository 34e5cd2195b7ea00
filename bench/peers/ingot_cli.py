"""ingot, timed through its CLI, for bench/compare.py: `ingot bench --pp N
--tg N -r 1` when the binary has it, else `ingot generate --json`."""
import datetime
import json
import subprocess
import sys
from pathlib import Path

VOCAB = 49152
BOS = 1


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# -----------------------------------------------------------------------------
# ingot, through its CLI
# -----------------------------------------------------------------------------

def ingot_has_bench(ingot):
    try:
        r = subprocess.run([str(ingot), "bench", "--help"], capture_output=True, text=True, timeout=60)
    except OSError:
        return False, ""
    text = r.stdout + r.stderr
    return r.returncode == 0 and "--pp" in text, text


def find_tokens_per_s(section):
    """tokens/s mean from one mode of `ingot bench --json` ({"tokens_per_s":
    {"mean": ...}} or a bare number), searching one level of nesting."""
    if isinstance(section, dict):
        v = section.get("tokens_per_s")
        if isinstance(v, dict) and "mean" in v:
            return float(v["mean"])
        if isinstance(v, (int, float)):
            return float(v)
        for sub in section.values():
            if isinstance(sub, dict):
                got = find_tokens_per_s(sub)
                if got is not None:
                    return got
    return None


class IngotCli:
    def __init__(self, ingot, artifact, threads, mode, tmpdir):
        self.ingot, self.artifact, self.threads = str(ingot), str(artifact), threads
        self.tmp = Path(tmpdir)
        has_bench, help_text = ingot_has_bench(ingot)
        if mode == "auto":
            mode = "bench" if has_bench else "generate"
        if mode == "bench" and not has_bench:
            raise RuntimeError(f"{ingot} has no usable `bench` command")
        self.mode = mode
        self.bench_extra = ["--no-probe"] if "--no-probe" in help_text else []
        built = datetime.datetime.fromtimestamp(Path(ingot).stat().st_mtime, datetime.timezone.utc)
        self.info = {"ingot": self.ingot, "binary_mtime": f"{built:%Y-%m-%d %H:%M UTC}", "mode": mode}
        self.greedy_tokens = None

    def _run(self, args):
        r = subprocess.run([self.ingot] + args, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ingot {' '.join(args[:2])} failed ({r.returncode}): {r.stderr.strip()[-2000:]}")
        return r.stdout

    def _generate(self, prompt, n_new):
        out = self._run(["generate", self.artifact, "--prompt-tokens", ",".join(map(str, prompt)),
                         "--max-new-tokens", str(n_new), "--temperature", "0", "--json",
                         "--threads", str(self.threads)])
        return json.loads(out.strip().splitlines()[-1])

    def _bench(self, n_pp, n_tg):
        f = self.tmp / "ingot-bench.json"
        self._run(["bench", self.artifact, "--pp", str(n_pp), "--tg", str(n_tg), "-r", "1",
                   "--threads", str(self.threads), "--json", str(f)] + self.bench_extra)
        return json.loads(f.read_text())

    def pp_tg(self, tokens, n_tg):
        """(pp tokens/s, tg tokens/s) from one measurement of each."""
        if self.mode == "bench":
            d = self._bench(len(tokens), n_tg)
            pp, tg = find_tokens_per_s(d.get("pp")), find_tokens_per_s(d.get("tg"))
            if pp is None or tg is None:
                raise RuntimeError(f"`ingot bench --json` has no pp/tg tokens_per_s: {json.dumps(d)[:500]}")
            return pp, tg
        d = self._generate(tokens, 1)
        pp = len(tokens) / (d["ttft_ms"] / 1000.0)
        d = self._generate([BOS], n_tg + 1)
        produced = len(d["tokens"])
        if produced != n_tg + 1:
            raise RuntimeError(f"ingot generate stopped after {produced} tokens ({d['finish_reason']}); "
                               f"tg needs {n_tg + 1}")
        self.greedy_tokens = d["tokens"]
        return pp, 1000.0 / d["tpot_ms"]


# -----------------------------------------------------------------------------
# Preparing the peers' models
# -----------------------------------------------------------------------------

