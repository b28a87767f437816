"""tests/server/server_process.py - starting `llmco2 serve` on a free port for the HTTP and browser tests, calling it,
and running the CLI for the answers the server must equal."""
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

BIN = os.environ.get("LLMCO2_BIN", "build/release/src/cli/llmco2")


class Server:
    """`llmco2 serve --port 0 ARGS` in the background; its stderr (the access log) goes to a temporary file."""

    def __init__(self, *args):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([BIN, "serve", "--port", "0", *args], stdout=subprocess.PIPE,
                                     stderr=self.log, text=True)
        line = self.proc.stdout.readline()  # "llmco2 serve: listening on http://127.0.0.1:PORT"
        if "listening on http://" not in line:
            self.proc.kill()
            raise RuntimeError(f"llmco2 serve did not start: {line!r}")
        self.url = line.strip().split("listening on ")[1]
        self.port = int(self.url.rsplit(":", 1)[1])

    def stop(self, sig=signal.SIGTERM, timeout_s=20):
        """Signals the server; returns its exit code, the rest of its stdout and its stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rest = self.proc.stdout.read()
        code = self.proc.wait(timeout=timeout_s)
        self.log.seek(0)
        return code, rest, self.log.read()

    def call(self, path, body=None, method=None, raw=None, timeout_s=60, content_type="application/json"):
        """(status, headers, parsed JSON or text) of one request; `raw` posts bytes as they are."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return response.status, response.headers, decoded(response)
        except urllib.error.HTTPError as e:
            return e.code, e.headers, decoded(e)


def seconds_until_closed(sock, limit_s=10):
    """Seconds until the server closes `sock` (recv returns b""); fails if it sends anything or keeps it open."""
    sock.settimeout(limit_s)
    started = time.monotonic()
    if sock.recv(100) != b"":
        raise AssertionError("the server sent data instead of closing")
    return time.monotonic() - started


def decoded(response):
    text = response.read().decode()
    return json.loads(text) if response.headers.get("Content-Type", "").startswith("application/json") else text


def cli_json(*args):
    """The CLI's --format json answer (the CLI must succeed)."""
    done = subprocess.run([BIN, *args, "--format", "json"], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"llmco2 {' '.join(args)} failed: {done.stderr}")
    return json.loads(done.stdout)


def cli_error(*args):
    """The message the CLI prints for bad input (`llmco2: error: MESSAGE`), checking it exits 2."""
    done = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.returncode, done.stderr)
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("llmco2: error: "), line
    return line[len("llmco2: error: "):]


def request_flags(request):
    """A request object's keys as CLI flags: {"batch": 4} -> ["--batch", "4"]."""
    flags = []
    for key, value in request.items():
        flags += [f"--{key.replace('_', '-')}", str(value)]
    return flags


def without(document, *keys):
    return {k: v for k, v in document.items() if k not in keys}
