"""The peers' worker processes for bench/compare.py: one long-lived process
per peer (llama.cpp through llama-cpp-python, onnxruntime), driven over
stdin/stdout with one JSON object per line, so a peer's load time and
allocator state stay out of the timings.

Run as `python workers.py KIND MODEL THREADS N_CTX PEER_WAIT` by Worker.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BOS = 1
PEERS_DIR = Path(__file__).resolve().parent


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
        cmd = [sys.executable, str(Path(__file__).resolve()), kind, str(model),
               str(threads), str(n_ctx), peer_wait]
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




if __name__ == "__main__":
    kind, model, threads, n_ctx, peer_wait = sys.argv[1:6]
    sys.exit(worker_main(kind, model, int(threads), int(n_ctx), peer_wait == "spin"))
