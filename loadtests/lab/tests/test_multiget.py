"""The multi-get phase: its k6 and wrk scripts send what the server's multi-get reads, and the lab
runs it as a phase of its own, on k6 or wrk (TOOL), at its own rate, with its keys per second in the
report."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import unittest
from pathlib import Path
from unittest import mock

from lab import defaults, load, runrecord, settings, tools
from lab.report import views
from lab.scenarios import phases as phase_scenario

from .test_lab import FakeExecutor


class MultiGetPhaseTest(unittest.TestCase):
    def run_with(self, phases: list[str], **kwargs) -> list:
        executor = FakeExecutor()
        with tempfile.TemporaryDirectory() as tmp:
            cfg = settings.RunConfig(targets=["http://127.0.0.1:1"], pids=[], phases=phases, duration_s=30,
                                     warmup_s=0, events=[], reports_dir=Path(tmp), **kwargs)
            with mock.patch.object(runrecord.Run, "finish", lambda run: run.dir):
                phase_scenario.run_phases(cfg, executor)
        return [(label, spec) for label, spec in executor.specs]

    def test_fill_then_multiget_runs_the_multiget_script_on_k6_at_its_own_rate(self):
        specs = self.run_with(["fill", "multiget"], tool="k6", multiget_rate=7, multiget_size=33)
        self.assertEqual(["fill", "multiget"], [label for label, _ in specs])
        multiget = specs[1][1]
        self.assertEqual(("multiget", "k6", 7, 33), (multiget.scenario, multiget.tool, multiget.rate, multiget.multiget_size))
        env = load.k6_env(multiget)
        self.assertEqual(("7", "33"), (env["RATE"], env["MULTIGET_SIZE"]))
        self.assertNotIn("MULTIGET_SIZE", load.k6_env(settings.RunConfig(targets=["http://x"], pids=[]).spec("get")))

    def test_with_tool_wrk_the_multiget_phase_runs_its_wrk_script_at_its_own_rate(self):
        specs = self.run_with(["fill", "multiget"], tool="wrk", multiget_rate=7, multiget_size=33)
        self.assertEqual([("fill", "k6"), ("multiget", "wrk")], [(label, spec.tool) for label, spec in specs])
        multiget = specs[1][1]
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(tools, "wrk", lambda: tools.Wrk("/usr/bin/wrk2", True, "wrk2")):
            (command,) = load.commands(multiget, Path(tmp))
        self.assertEqual("multiget.lua", Path(command.argv[command.argv.index("-s") + 1]).name)
        self.assertIn("-R7", command.argv)
        self.assertEqual("33", command.env["MULTIGET_SIZE"])
        self.assertEqual(("multiget", "wrk"), phase_scenario.phase_spec("multiget@wrk"))

    def test_the_defaults_come_from_the_file(self):
        cfg = settings.RunConfig(targets=["http://x"], pids=[])
        spec = cfg.spec("multiget")
        self.assertEqual((defaults.integer("MULTIGET_RATE"), defaults.integer("MULTIGET_SIZE")), (spec.rate, spec.multiget_size))

    def test_the_report_shows_keys_per_second(self):
        run = {"config": {"slo_p99_ms": 10}}
        result = {"achieved_rate": 50.0, "requested_rate": 50, "keys_per_request": 100, "keys_rate": 5000.0, "latency": {}}
        view = views.phase_view(run, {"label": "multiget", "scenario": "multiget", "result": result}, None)
        self.assertEqual((100, 5000.0), (view["keys_per_request"], view["keys_rate"]))


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every multi-get with one chunk per key, as a node that holds them all, and keeps the requests."""

    requests: list = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Recorder.requests.append((self.path, self.headers.get("Content-Type"), body))
        keys = body.decode().splitlines()
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for key in keys:
            chunk = f"{key}\nvalue".encode()
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")


class MultiGetScriptTest(unittest.TestCase):
    def test_the_script_posts_its_keys_one_per_line_and_counts_keys_per_second(self):
        k6 = tools.k6()
        if not Path(k6).exists():
            self.skipTest("no k6 (make lab-tools)")
        Recorder.requests = []
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with tempfile.TemporaryDirectory() as tmp:
                summary = Path(tmp) / "summary.json"
                env = {"PATH": "/usr/bin:/bin", "TARGETS": f"http://127.0.0.1:{server.server_port}", "RATE": "10",
                       "DURATION": "2s", "KEYS": "50", "KEY_PREFIX": "mk", "MULTIGET_SIZE": "7", "REPLICAS": "2/3",
                       "VUS": "2", "MAX_VUS": "4", "SLO_P99_MS": "60000", "SUMMARY_JSON": str(summary),
                       "KVLAB_DEFAULTS": str(tools.LOADTESTS / "lab" / "defaults.env")}
                p = subprocess.run([k6, "run", "--quiet", str(tools.LOADTESTS / "k6" / "multiget.js")],
                                   capture_output=True, text=True, env=env, cwd=tmp, timeout=120)
                self.assertEqual(0, p.returncode, p.stderr + p.stdout)
                result = json.loads(summary.read_text())
        finally:
            server.shutdown()
            server.server_close()
        assert_multigets(self, Recorder.requests, at_least=10)
        self.assertEqual(("multiget", 7, {"200": result["requests"]}), (result["scenario"], result["keys_per_request"], result["status_counts"]))
        self.assertAlmostEqual(result["achieved_rate"] * 7, result["keys_rate"])


class _ChunkedRecorder(http.server.BaseHTTPRequestHandler):
    """The same answers as Recorder's, on keep-alive connections (wrk's)."""

    protocol_version = "HTTP/1.1"
    requests: list

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.requests.append((self.path, self.headers.get("Content-Type"), body))
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for key in body.decode().splitlines():
            chunk = f"{key}\nvalue".encode()
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # wrk drops its connections when it is stopped: no traceback for that


@unittest.skipUnless(shutil.which("wrk") or shutil.which("wrk2"), "no wrk on PATH")
class WrkMultiGetScriptTest(unittest.TestCase):
    def test_the_script_posts_its_keys_one_per_line_and_the_lab_counts_keys_per_second(self):
        handler = type("Recorder", (_ChunkedRecorder,), {"requests": []})
        server = _Server(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            spec = load.LoadSpec("multiget", [f"http://127.0.0.1:{server.server_port}"], 20, 2, keys=50, key_prefix="mk",
                                 multiget_size=7, replicas="2/3", tool="wrk", connections=2, threads=1)
            with tempfile.TemporaryDirectory() as tmp:
                result = load.run(spec, Path(tmp), [os.getpid()], "multiget").result
        finally:
            server.shutdown()
            server.server_close()
        assert_multigets(self, handler.requests, at_least=20)
        self.assertEqual(("multiget", 7, {"200": result["requests"]}, 0.0),
                         (result["scenario"], result["keys_per_request"], result["status_counts"], result["error_rate"]))
        self.assertAlmostEqual(result["achieved_rate"] * 7, result["keys_rate"])


def assert_multigets(test: unittest.TestCase, requests: list, at_least: int) -> None:
    """Each request a POST of 7 keys of the 50-key space mk.., one per line, at 2/3."""
    test.assertGreaterEqual(len(requests), at_least)
    for path, content_type, body in requests:
        test.assertEqual("/v0/entities/get?replicas=2/3", path)
        test.assertEqual("text/plain", content_type)
        keys = body.decode().split("\n")
        test.assertEqual("", keys.pop(), "the body ends with a newline")
        test.assertEqual(7, len(keys))
        for key in keys:
            test.assertRegex(key, r"^mk\d{10}$")
            test.assertLess(int(key[2:]), 50)
