"""Runs `ingot serve` for the server tests: a free port, the process's own
PID (for RSS and signals), and a reader of its Prometheus metrics."""
import re
import signal
import subprocess
import threading
import time
import urllib.request

from ingot_testlib import ingot_bin

START_TIMEOUT_S = 60


class ServeProcess:
    """`ingot serve ART --port 0 FLAGS…`; `url` is its base address."""

    def __init__(self, artifact, *flags, env=None):
        self.proc = subprocess.Popen(
            [str(ingot_bin()), "serve", str(artifact), "--port", "0",
             *map(str, flags)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.stderr_lines = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        line = self._first_line()
        m = re.search(r"listening on (http://[\d.]+:\d+)", line)
        assert m, f"no address in {line!r}; stderr: {self.stderr()}"
        self.url = m.group(1)
        self.pid = self.proc.pid

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def _first_line(self):
        result = []
        reader = threading.Thread(
            target=lambda: result.append(self.proc.stdout.readline()),
            daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_S)
        assert result and result[0], (
            f"ingot serve did not start: {self.stderr()}")
        return result[0]

    def stderr(self):
        return "".join(self.stderr_lines)

    def get(self, path, headers=None):
        """(status, body text) of GET path."""
        req = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def post(self, path, body, headers=None):
        """(status, headers, body text) of POST path with raw bytes."""
        req = urllib.request.Request(self.url + path, data=body,
                                     headers=headers or {}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()

    def metrics(self):
        """{name or name{labels}: value} of /metrics."""
        status, text = self.get("/metrics")
        assert status == 200, text
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                key, value = line.rsplit(" ", 1)
                out[key] = float(value)
        return out

    def wait_metric(self, key, predicate, timeout=30):
        deadline = time.time() + timeout
        while True:
            value = self.metrics().get(key)
            if value is not None and predicate(value):
                return value
            assert time.time() < deadline, f"{key} stayed at {value}"
            time.sleep(0.05)

    def rss_kib(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Sends `sig`, waits; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
