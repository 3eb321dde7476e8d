"""Self-tests of one latency distribution from several load generators (lab.latency): wrk
histograms added up, spectra mixed, and the histogram the wrk scripts print, on a real wrk where
one is installed."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lab import load, wrkresult
from lab.report import TABLE
from lab.latency import add_histograms, mix_spectra, percentile_rank
from lab.tests.test_k8s import k6_spectrum_percentiles, uniform_latency
from lab.tests.test_lab import latency

SCRIPTS = Path(__file__).resolve().parents[2] / "wrk2"


def histogram(samples_us: list[int]) -> list[list[int]]:
    counts: dict[int, int] = {}
    for v in samples_us:
        counts[v] = counts.get(v, 0) + 1
    return [[v, counts[v]] for v in sorted(counts)]


def series(samples_us: list[int]) -> dict:
    """A part's series as wrk reports it: nearest-rank percentiles of its own samples, in ms."""
    s = sorted(samples_us)

    def q(p: float) -> float:
        return s[-1] / 1000 if p >= 1 else s[percentile_rank(p, len(s)) - 1] / 1000

    return {
        "unit": "ms",
        "min": s[0] / 1000,
        "mean": sum(s) / len(s) / 1000,
        "max": s[-1] / 1000,
        "percentiles": {name: q(float(name[1:]) / 100) for name in TABLE},
        "spectrum": [[p, q(p)] for p in (0.0, 0.5, 0.9, 0.99, 0.999, 1.0)],
    }


class AddHistogramsTest(unittest.TestCase):
    def test_the_sum_has_the_percentiles_of_every_request_together(self):
        rng = random.Random(11)
        # Three wrk processes, one per node; the third node is slower than the others.
        parts = [[int(rng.lognormvariate(7.0 + 0.4 * (i == 2), 0.7)) for _ in range(n)]
                 for i, n in enumerate((5000, 7000, 3000))]
        merged = add_histograms([(series(p), histogram(p)) for p in parts])
        pooled = series([v for p in parts for v in p])
        self.assertEqual(merged["percentiles"], pooled["percentiles"])
        self.assertEqual(merged["spectrum"], pooled["spectrum"])
        self.assertEqual((merged["min"], merged["max"]), (pooled["min"], pooled["max"]))
        self.assertAlmostEqual(merged["mean"], pooled["mean"])
        # Not the worst part's p99: that one's share is slower than the whole.
        self.assertLess(merged["percentiles"]["p99"], series(parts[2])["percentiles"]["p99"])

    def test_a_bucket_reads_as_its_upper_edge_capped_at_the_maximum(self):
        # From 10 ms up, kvlab.lua counts latencies in buckets of four significant digits.
        part = series([12_101, 12_102, 12_345])
        merged = add_histograms([(part, [[12_110, 2], [12_350, 1]])])
        self.assertEqual(merged["percentiles"]["p50"], 12.11)
        self.assertEqual(merged["percentiles"]["p99"], 12.345)  # the max, not the edge 12.35
        self.assertEqual(merged["percentiles"]["p100"], 12.345)

    def test_the_rank_is_wrks(self):
        # wrk: round(p * count + 0.5), halves rounded up.
        self.assertEqual(percentile_rank(0.5, 3), 2)
        self.assertEqual(percentile_rank(0.99, 100), 100)
        self.assertEqual(percentile_rank(0.99, 120_098), 118_898)
        self.assertEqual(percentile_rank(0.0001, 10), 1)


class MixSpectraTest(unittest.TestCase):
    def test_same_distribution_merges_to_itself(self):
        lat = latency(2.0)
        merged = mix_spectra([(100, lat), (300, lat)])
        for name, v in lat["percentiles"].items():
            self.assertAlmostEqual(merged["percentiles"][name], v, places=6)
        self.assertEqual((merged["min"], merged["max"]), (lat["min"], lat["max"]))

    def test_mixture_of_two_uniform_distributions(self):
        # Equal weights of U[0,10] and U[10,30]: the median is 10 ms, p75 20 ms, p90 26 ms.
        merged = mix_spectra([(1000, uniform_latency(0, 10)), (1000, uniform_latency(10, 30))])
        self.assertAlmostEqual(merged["percentiles"]["p50"], 10, places=6)
        self.assertAlmostEqual(merged["percentiles"]["p75"], 20, places=6)
        self.assertAlmostEqual(merged["percentiles"]["p90"], 26, places=6)
        self.assertEqual((merged["min"], merged["max"], merged["mean"]), (0, 30, 12.5))
        # Weights count: three quarters of the requests in U[0,10] put p75 at 10 ms.
        merged = mix_spectra([(3000, uniform_latency(0, 10)), (1000, uniform_latency(10, 30))])
        self.assertAlmostEqual(merged["percentiles"]["p75"], 10, places=6)

    def test_mixture_is_close_to_the_pooled_samples(self):
        rng = random.Random(7)
        pods = [[rng.lognormvariate(1.0 + 0.1 * i, 0.6) for _ in range(20_000)] for i in range(3)]

        def summary(samples):
            s = sorted(samples)
            q = lambda p: s[min(len(s) - 1, int(p * len(s)))]  # noqa: E731
            table = {f"p{p * 100:g}": q(p) for p in (0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 0.99999)}
            table["p100"] = s[-1]
            return {
                "unit": "ms",
                "min": s[0],
                "mean": sum(s) / len(s),
                "max": s[-1],
                "percentiles": table,
                "spectrum": [[p, q(p)] for p in k6_spectrum_percentiles()[:-1]] + [[1.0, s[-1]]],
            }

        merged = mix_spectra([(len(s), summary(s)) for s in pods])
        pooled = summary([x for s in pods for x in s])
        # Within 1 % of the pooled samples' percentiles (0.1-0.4 % here), with k6's 89 spectrum points.
        for name in ("p50", "p75", "p90", "p99", "p99.9"):
            self.assertAlmostEqual(
                merged["percentiles"][name],
                pooled["percentiles"][name],
                delta=0.01 * pooled["percentiles"][name],
                msg=name,
            )
        self.assertAlmostEqual(merged["mean"], pooled["mean"], places=6)
        self.assertEqual(merged["max"], pooled["max"])


class MergeWrkTest(unittest.TestCase):
    SPEC = load.LoadSpec("put", ["http://127.0.0.1:8280", "http://127.0.0.1:8281"], 2000, 5, tool="wrk")

    def raw(self, target: str, samples: list[int], with_histogram: bool = True) -> dict:
        return {
            "requests": len(samples), "duration_s": 5.0, "bytes_received": 0, "target": target,
            "errors": {"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0},
            "status_counts": {"201": len(samples)}, "latency": series(samples),
            "histogram_us": histogram(samples) if with_histogram else None,
        }

    def test_the_phase_latency_is_every_requests_and_each_targets_is_kept(self):
        fast, slow = list(range(500, 1500)), list(range(1000, 21000, 20))
        wrk = load.tools.Wrk("wrk", False, "4.1.0")
        parts = [self.raw("http://127.0.0.1:8280", fast), self.raw("http://127.0.0.1:8281", slow)]
        result = wrkresult.merge_wrk(self.SPEC, parts, wrk=wrk)
        self.assertEqual(list(result["latency"]), ["all"])
        self.assertEqual(result["latency"]["all"]["percentiles"], series(fast + slow)["percentiles"])
        self.assertEqual(result["latency_by_target"]["127.0.0.1:8281"]["percentiles"]["p99"], 20.8)
        self.assertIn("histograms added up", result["latency_merge"])

    def test_without_histograms_the_spectra_are_mixed(self):
        a, b = list(range(500, 1500)), list(range(600, 1600))
        wrk = load.tools.Wrk("wrk2", True, "4.0.0")
        parts = [self.raw("http://127.0.0.1:8280", a, False), self.raw("http://127.0.0.1:8281", b, False)]
        result = wrkresult.merge_wrk(self.SPEC, parts, wrk=wrk)
        self.assertIn("spectra mixed", result["latency_merge"])
        self.assertEqual(result["latency"]["all"]["merged_from"], 2)


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"OK")

    def log_message(self, *args):
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # wrk resets its connections when it stops; anything else is worth its traceback.
        if not isinstance(sys.exc_info()[1], ConnectionResetError):
            super().handle_error(request, client_address)


@unittest.skipUnless(shutil.which("wrk"), "wrk is not installed (make lab-tools installs it)")
class WrkHistogramTest(unittest.TestCase):
    def test_wrk_prints_a_histogram_that_gives_back_its_own_percentiles(self):
        server = _Server(("127.0.0.1", 0), _Ok)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                ["wrk", "-t1", "-c4", "-d2s", "-s", str(SCRIPTS / "status.lua"), f"http://127.0.0.1:{server.server_port}"],
                capture_output=True, text=True, timeout=60, check=True, cwd=tmp,
            ).stdout
        line = next(x for x in out.splitlines() if x.startswith(wrkresult.WRK_MARKER))
        raw = json.loads(line[len(wrkresult.WRK_MARKER):])
        buckets = raw["histogram_us"]
        self.assertGreater(sum(n for _, n in buckets), 100)
        self.assertEqual(buckets, sorted(buckets))
        own = raw["latency"]
        back = add_histograms([(own, buckets)])
        for name in TABLE:
            # Exact below 10 ms; above, within the bucket (0.1 %), never below.
            self.assertGreaterEqual(back["percentiles"][name], own["percentiles"][name], name)
            self.assertLessEqual(back["percentiles"][name], own["percentiles"][name] * 1.001 + 1e-9, name)
