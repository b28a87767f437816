"""tests/server/test_http.py - `llmco2 serve` over real HTTP: every endpoint equals the CLI's answer, every error has
its status and the CLI's message, the pool's bounds, timeouts, the access log and a graceful stop.
Run: LLMCO2_BIN=build/release/src/cli/llmco2 /usr/bin/python3 -m pytest tests/server/test_http.py"""
import csv
import json
import os
import pathlib
import re
import socket
import tempfile
import time
import unittest

from server_process import Server, cli_error, cli_json, request_flags, seconds_until_closed, without

DATA = pathlib.Path(os.environ.get("LLMCO2_DATA", pathlib.Path(__file__).resolve().parents[2] / "data"))
REQUEST = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "batch": 4, "prompt": 512, "gen": 256, "region": "FRA"}


class Endpoints(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--threads", "2", "--max-body-bytes", "200000")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def post(self, path, body):
        return self.server.call(path, body)

    def assert_error(self, status, body, code):
        self.assertEqual(status, code, body)
        self.assertEqual(set(body), {"error", "status"})
        self.assertEqual(body["status"], code)
        return body["error"]

    def test_health_and_versions(self):
        status, headers, health = self.server.call("/health")
        self.assertEqual(status, 200)
        self.assertEqual(health["status"], "ok")
        _, _, versions = self.server.call("/v1/versions")
        self.assertEqual(health["versions"], versions)
        self.assertEqual(json.loads(headers["X-Llmco2-Versions"]), versions)
        cmake = (pathlib.Path(__file__).resolve().parents[2] / "CMakeLists.txt").read_text()
        project_version = re.search(r"project\(llmco2 VERSION ([0-9.]+)", cmake).group(1)
        self.assertEqual(versions["llmco2"], project_version)  # the project's version in CMakeLists.txt
        self.assertIn("llmco2", versions["predictors"])  # data/predictors/llmco2.model is bundled

    def test_predict_equals_cli(self):
        for request in (REQUEST, {"model": "mixtral-8x7b", "gpu": "a100-80gb-sxm", "gpus": 2, "ci": 120, "pue": 1.2},
                        {}):
            status, _, answer = self.post("/v1/predict", request)
            self.assertEqual(status, 200, answer)
            expected = cli_json("predict", *request_flags(request))
            self.assertEqual(without(answer, "versions", "warnings"), expected)
            self.assertIsInstance(answer["warnings"], list)

    def test_posted_config_predicts_as_the_bundled_model(self):
        config = json.loads((DATA / "models" / "meta-llama-Llama-3.1-8B.json").read_text())
        status, _, posted = self.post("/v1/predict", {**REQUEST, "model": "my-llama", "model_config": config})
        self.assertEqual(status, 200, posted)
        _, _, bundled = self.post("/v1/predict", REQUEST)
        self.assertEqual(posted["energy_j"], bundled["energy_j"])
        self.assertEqual(posted["co2_g"], bundled["co2_g"])

    def test_batch_equals_single_predicts(self):
        requests = [REQUEST, {**REQUEST, "gpu": "a100-80gb-sxm"}, {**REQUEST, "batch": 1, "gen": 1}]
        status, _, answer = self.post("/v1/predict/batch", {"requests": requests})
        self.assertEqual(status, 200, answer)
        self.assertEqual(len(answer["results"]), 3)
        for request, result in zip(requests, answer["results"]):
            _, _, single = self.post("/v1/predict", request)
            self.assertEqual(without(result, "versions"), without(single, "versions"))

    def test_batch_cap_and_bad_item(self):
        status, _, body = self.post("/v1/predict/batch", {"requests": [{}] * 1001})
        self.assertIn("at most 1000", self.assert_error(status, body, 413))
        status, _, body = self.post("/v1/predict/batch", {"requests": [{}, {"gpu": "no-such-gpu"}]})
        self.assertTrue(self.assert_error(status, body, 400).startswith("requests[1]: "), body)

    def test_compare_rows_equal_predict_on_every_kind_of_gpu(self):
        # One request, one answer: /v1/compare's row of a GPU type and count is /v1/predict's answer for it
        # (fallbacks per GPU: bf16 on a V100 runs as fp16, a T4 needs two boards, Gaudi 3 has its own node).
        for gpu, gpus in [("h100-sxm", 1), ("v100-sxm2-32gb", 1), ("t4", 2), ("gaudi3", 1), ("mi300x", 1)]:
            request = {**REQUEST, "gpu": gpu, "gpus": gpus}
            _, _, predicted = self.post("/v1/predict", request)
            status, _, compared = self.post("/v1/compare", {"request": request, "gpu_types": [gpu], "counts": [gpus]})
            self.assertEqual(status, 200, compared)
            row = compared["setups"][0]
            for key in ("energy_j", "latency_s", "co2_g", "dtype", "energy_scope", "node", "evidence"):
                self.assertEqual(row[key], predicted[key], f"{gpu}: {key}")

    def test_compare_equals_cli(self):
        with tempfile.TemporaryDirectory() as plots:
            expected = cli_json("compare", *request_flags(REQUEST), "--gpu-types", "h100-sxm,a100-80gb-sxm,l4",
                                "--counts", "1,2", "--slo-ms", "5000", "--plot", plots, "--quiet")
        body = {"request": REQUEST, "gpu_types": ["h100-sxm", "a100-80gb-sxm", "l4"], "counts": [1, 2], "slo_ms": 5000}
        status, _, answer = self.post("/v1/compare", body)
        self.assertEqual(status, 200, answer)
        self.assertEqual(answer["setups"], expected["setups"])
        self.assertEqual(len(answer["setups"]), 6)  # 3 GPU types x 2 counts
        self.assertIsNone(answer["plot_dir"])

    def test_compare_lists_are_bounded(self):
        status, _, body = self.post("/v1/compare", {"gpu_types": ["l4"] * 65})
        self.assertIn("at most 64 strings", self.assert_error(status, body, 400))
        status, _, body = self.post("/v1/compare", {"counts": [1] * 17})
        self.assertIn("at most 16 GPU counts", self.assert_error(status, body, 400))
        status, _, body = self.post("/v1/compare", {"counts": [0]})
        self.assertIn("'counts'", self.assert_error(status, body, 400))

    def test_catalogs_equal_cli(self):
        for name in ("models", "gpus", "nodes"):
            status, _, answer = self.server.call(f"/v1/{name}")
            self.assertEqual(status, 200)
            self.assertEqual(answer[name], cli_json(name))

    def test_regions_match_the_catalog_file(self):
        _, _, answer = self.server.call("/v1/regions")
        by_id = {r["id"]: r for r in answer["regions"]}
        with open(DATA / "carbon" / "regions.csv") as f:
            rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
        fra = next(r for r in rows if r["id"] == "FRA")
        self.assertAlmostEqual(by_id["FRA"]["ci_g_per_kwh"], float(fra["ci_g_per_kwh"]))
        self.assertEqual(len(by_id), len(rows))

    def test_unknown_gpu_gives_the_cli_message_without_the_file_hint(self):
        # The same suggestion as the command line; only the hint differs: the server reads no GPU file.
        status, _, body = self.post("/v1/predict", {**REQUEST, "gpu": "h100-sxn"})
        message = self.assert_error(status, body, 400)
        cli = cli_error("predict", *request_flags({**REQUEST, "gpu": "h100-sxn"}))
        self.assertEqual(message.split("? ")[0], cli.split("? ")[0])
        self.assertIn("did you mean h100-sxm", message)
        self.assertIn("here a GPU is a catalog id", message)
        self.assertNotIn("file", message)

    def test_malformed_json_names_the_byte(self):
        status, _, body = self.server.call("/v1/predict", raw=b'{"model": "llama-3.1-8b",, }')
        message = self.assert_error(status, body, 400)
        self.assertIn("malformed JSON at byte 26", message)  # the second comma is the 26th byte

    def test_invalid_utf8_is_a_400_with_valid_json(self):
        status, _, body = self.server.call("/v1/predict/batch", raw=b'\x87"requests":5}')
        self.assertIn("request body: malformed JSON at byte 1", self.assert_error(status, body, 400))

    def test_numbers_beyond_a_double_and_deep_nesting_are_400(self):
        status, _, body = self.server.call("/v1/compare", raw=b'{"reque":6e666666666661}')
        self.assertIn("a number too large for a double", self.assert_error(status, body, 400))
        status, _, body = self.server.call("/v1/predict", raw=b'{"model_config":' + b"[" * 100000)
        self.assertIn("nested deeper than 64 levels", self.assert_error(status, body, 400))

    def test_body_over_cap(self):
        status, _, body = self.server.call("/v1/predict", raw=b" " * 200001)
        self.assertIn("200000 bytes", self.assert_error(status, body, 413))

    def test_an_unknown_gpu_type_in_compare_says_what_a_gpu_is_here(self):
        # Issue 41: /v1/compare's gpu_types answered "a GPU JSON file path also works", which the server refuses.
        status, _, body = self.post("/v1/compare", {"request": REQUEST, "gpu_types": ["nope"]})
        message = self.assert_error(status, body, 400)
        self.assertIn("here a GPU is a catalog id", message)
        self.assertNotIn("JSON file", message)

    def test_unknown_key_is_named(self):
        status, _, body = self.post("/v1/predict", {**REQUEST, "bacth": 4})
        message = self.assert_error(status, body, 400)
        self.assertIn("unknown key 'bacth'", message)
        self.assertIn("batch", message)  # the suggestion
        status, _, body = self.post("/v1/compare", {"request": REQUEST, "gpu_type": ["l4"]})
        self.assertIn("'gpu_type'", self.assert_error(status, body, 400))

    def test_paths_are_refused(self):
        for request in ({"model": str(DATA / "models" / "meta-llama-Llama-3.1-8B.json")}, {"gpu": str(DATA / "gpus" / "l4.json")},
                        {"model": "./data/models/meta-llama-Llama-3.1-8B.json"}, {"node": "/etc/passwd"}):
            status, _, body = self.post("/v1/predict", request)
            self.assert_error(status, body, 400)

    def test_wrong_method_and_unknown_route(self):
        status, headers, body = self.server.call("/v1/predict")
        self.assertIn("method not allowed", self.assert_error(status, body, 405))
        self.assertEqual(headers["Allow"], "POST")
        status, _, body = self.server.call("/v1/models", body={}, method="POST")
        self.assert_error(status, body, 405)
        status, _, body = self.server.call("/v2/predict")
        self.assertIn("no such endpoint", self.assert_error(status, body, 404))

    def test_web_page_and_assets(self):
        for path, kind in (("/", "text/html"), ("/static/app.js", "text/javascript"),
                           ("/static/style.css", "text/css"), ("/openapi.json", "application/json")):
            status, headers, body = self.server.call(path)
            self.assertEqual(status, 200, path)
            self.assertTrue(headers["Content-Type"].startswith(kind), headers["Content-Type"])
        self.assertIn('src="/static/app.js"', self.server.call("/")[2])

    def test_openapi_describes_served_routes(self):
        _, _, spec = self.server.call("/openapi.json")
        for path, item in spec["paths"].items():
            for method in item:
                status, _, _ = self.server.call(path, body={} if method == "post" else None, method=method.upper())
                self.assertNotIn(status, (404, 405), f"{method} {path}")

    def test_slow_client_does_not_block_others(self):
        with socket.create_connection(("127.0.0.1", self.server.port)) as silent:
            started = time.monotonic()
            status, _, _ = self.server.call("/health", timeout_s=5)
            self.assertEqual(status, 200)
            self.assertLess(time.monotonic() - started, 2)
            silent.settimeout(0)


def await_status(server, wanted, deadline_s=10):
    """Calls /health until it answers `wanted` (the server's own signal that its pool reached that state), at most
    `deadline_s`; returns the last answer."""
    end = time.monotonic() + deadline_s
    while True:
        answer = server.call("/health", timeout_s=deadline_s)
        if answer[0] == wanted or time.monotonic() > end:
            return answer
        time.sleep(0.02)


class Limits(unittest.TestCase):
    def test_queue_full_answers_503(self):
        server = Server("--threads", "1", "--queue", "0", "--timeout-s", "5")
        try:
            # The one worker is held writing answers to a client that reads none (pipelined requests for the
            # script, more than the socket buffers hold); idle or slow connections alone hold no worker. The pool is
            # full once the server says so by answering 503 (no fixed wait).
            holder = socket.create_connection(("127.0.0.1", server.port))
            holder.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            holder.sendall(b"GET /static/app.js HTTP/1.1\r\n\r\n" * 1000)
            status, headers, body = await_status(server, 503)
            self.assertEqual(status, 503, body)
            self.assertEqual(body["status"], 503)
            self.assertIn("busy", body["error"])
            self.assertEqual(headers["Retry-After"], "1")
            holder.close()
            self.assertEqual(await_status(server, 200)[0], 200)  # freed once the write fails or times out
        finally:
            server.stop()

    def test_silent_client_is_dropped_after_the_timeout(self):
        server = Server("--timeout-s", "1")
        try:
            with socket.create_connection(("127.0.0.1", server.port)) as silent:
                self.assertLess(seconds_until_closed(silent), 5)
        finally:
            server.stop()

    def test_access_log_and_graceful_stop(self):
        server = Server()
        server.call("/health")
        server.call("/v1/predict", REQUEST)
        server.call("/nope")
        code, rest, log = server.stop()
        self.assertEqual(code, 0)
        self.assertIn("llmco2 serve: stopped", rest)
        lines = [json.loads(line) for line in log.splitlines()]
        # a line is written after its answer is sent, so two workers may write theirs in either order
        self.assertEqual(sorted((r["method"], r["path"], r["status"]) for r in lines),
                         [("GET", "/health", 200), ("GET", "/nope", 404), ("POST", "/v1/predict", 200)])
        for r in lines:
            self.assertEqual(set(r), {"time", "method", "path", "status", "bytes", "duration_ms"})
            self.assertRegex(r["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
            self.assertGreater(r["bytes"], 0)
            self.assertGreaterEqual(r["duration_ms"], 0)

    def test_sigint_stops_too(self):
        import signal
        code, rest, _ = Server().stop(signal.SIGINT)
        self.assertEqual(code, 0)
        self.assertIn("stopped", rest)

    def test_port_in_use_is_one_line_and_exit_2(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            message = cli_error("serve", "--port", str(port))
            self.assertEqual(message, f"serve: cannot listen on 127.0.0.1:{port} (address in use, or not an address "
                                      "of this machine)")


if __name__ == "__main__":
    unittest.main()
