"""Self-tests of a phase's time series and .hgrm files: k6's per-request CSV and wrk's per-second
counts read into seconds and HdrHistograms (lab.loadseries, lab.hdr), the nodes' Prometheus pages
sampled into per-interval figures and RocksDB events (lab.promtext, lab.nodeseries), the files a
phase writes (lab.timeseries), and their place in the phase record (lab.phase). The k6 output and
the Prometheus page are recorded from a real k6 and a real node (fixtures/)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from lab import hdr, load, loadseries, nodeseries, promtext, runrecord, settings, timeseries, wrkresult
from lab.scenarios import phases as phase_scenario
from lab.executor import Prepared
from lab.loadseries import K6Reader, Samples
from lab.tests.test_lab import FakeExecutor

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCRIPTS = Path(__file__).resolve().parents[2] / "wrk2"
K6_HEADER = "metric_name,timestamp,metric_value,expected_response,status,extra_tags,metadata"
T0 = 1_795_642_000.0


def k6_rows(t: float, ms: float, op: str = "get", status: int = 200, expected: bool = True) -> list[str]:
    """The rows k6 writes for one request that ended t s after T0, as the recorded output has them."""
    stamp = round((T0 + t) * 1e6)
    tags = f"{str(expected).lower()},{status},op={op},"
    rows = [f"{m},{stamp},{v:f},{tags}" for m, v in (("http_reqs", 1), ("http_req_duration", ms),
                                                        ("http_req_blocked", 0.01), ("http_req_failed", int(not expected)))]
    return rows + [f"iterations,{stamp},1.000000,,,,"]


class K6SeriesTest(unittest.TestCase):
    def test_the_recorded_output_gives_every_request_by_op(self):
        text = (FIXTURES / "k6-mixed.csv").read_text()
        durations = [line.split(",") for line in text.splitlines() if line.startswith("http_req_duration,")]
        first = min(int(d[1]) for d in durations) / 1e6
        reader = K6Reader(first - 0.5)
        reader.read(text.splitlines(keepends=True))
        series = reader.series()
        self.assertEqual(series.histograms["all"].get_total_count(), len(durations))
        ops = {d[5].removeprefix("op=") for d in durations}
        self.assertEqual(set(series.ops), ops)
        self.assertEqual(sum(h.get_total_count() for op, h in series.histograms.items() if op != "all"), len(durations))
        self.assertEqual(sum(s["requests"] for s in series.seconds), len(durations))
        slowest = max(float(d[2]) for d in durations)
        self.assertAlmostEqual(max(s["max_ms"] or 0 for s in series.seconds), slowest, places=6)
        part = series.part()
        self.assertEqual((part["source"], part["latency"]), ("k6", True))

    def test_seconds_count_requests_and_failures_and_read_their_latency(self):
        lines = [K6_HEADER]
        for i in range(100):  # second 0: 1..100 ms
            lines += k6_rows(0.001 + i * 0.009, i + 1.0)
        lines += k6_rows(2.5, 7.0, status=503, expected=False)  # second 2: one failure; second 1: nothing
        lines += k6_rows(-0.2, 900.0)  # ended before second 0: in the whole phase only
        reader = K6Reader(T0)
        reader.read(line + "\n" for line in lines)
        seconds = reader.series(duration_s=5).seconds

        self.assertEqual([s["t"] for s in seconds], [0, 1, 2, 3, 4])
        self.assertEqual([s["requests"] for s in seconds], [100, 0, 1, 0, 0])
        self.assertEqual([s["errors"] for s in seconds], [0, 0, 1, 0, 0])
        s0 = seconds[0]
        self.assertEqual(s0["max_ms"], 100.0)
        self.assertAlmostEqual(s0["p50_ms"], 50.0, delta=50 * 0.01)  # two significant digits per second
        self.assertAlmostEqual(s0["p99_ms"], 99.0, delta=99 * 0.01)
        self.assertEqual({k: seconds[1][k] for k in ("p50_ms", "p99_ms", "max_ms")},
                         {"p50_ms": None, "p99_ms": None, "max_ms": None})
        self.assertEqual(seconds[2]["max_ms"], 7.0)
        self.assertEqual(reader.whole.get_total_count(), 102)
        self.assertAlmostEqual(hdr.max_ms(reader.whole), 900.0, delta=0.9)

    def test_a_phase_of_one_op_has_no_ops_part(self):
        reader = K6Reader(T0)
        reader.read(line + "\n" for line in [K6_HEADER, *k6_rows(0.5, 1.0, op="put")])
        series = reader.series()
        self.assertEqual(series.ops, {})
        self.assertEqual(list(series.histograms), ["all"])
        self.assertNotIn("ops", series.part())

    def test_timestamps_in_any_unix_unit(self):
        for scale in (1, 1e3, 1e6, 1e9):
            reader = K6Reader(T0)
            reader.read([K6_HEADER, f"http_req_duration,{round((T0 + 3.2) * scale)},2.0,true,200,op=get,"])
            self.assertEqual(reader.series().seconds[3]["requests"], 1, scale)

    def test_a_file_that_is_not_k6_output_is_refused(self):
        with self.assertRaises(ValueError):
            K6Reader(T0).read(["hello,world\n"])


def wrk_part(t0_ms: float, requests: list[int], errors: list[int], histogram=None) -> dict:
    return {"requests": sum(requests), "per_second": {"t0_ms": t0_ms, "requests": requests, "errors": errors},
            "histogram_us": histogram}


class WrkSeriesTest(unittest.TestCase):
    def test_the_processes_counts_add_up_per_second_without_latency(self):
        parts = [
            wrk_part(T0 * 1000, [100, 100, 50], [0, 2, 0], [[900, 150], [1500, 100]]),
            wrk_part(T0 * 1000, [90, 110], [1, 0], [[1000, 200]]),
        ]
        series = loadseries.from_wrk(parts, T0, "wrk", duration_s=4)
        self.assertEqual(series.seconds, [
            {"t": 0, "requests": 190, "errors": 1},
            {"t": 1, "requests": 210, "errors": 2},
            {"t": 2, "requests": 50, "errors": 0},
            {"t": 3, "requests": 0, "errors": 0},
        ])
        part = series.part()
        self.assertFalse(part["latency"])
        self.assertIn("no latency per request", part["note"])
        whole = series.histograms["all"]
        self.assertEqual(whole.get_total_count(), 450)
        self.assertEqual(hdr.percentiles_ms(whole, [50])[50], 1.0)

    def test_counts_from_another_second_0_are_shifted_onto_the_phases(self):
        series = loadseries.from_wrk([wrk_part((T0 + 2) * 1000, [5, 6], [0, 0])], T0, "wrk")
        self.assertEqual([s["requests"] for s in series.seconds], [0, 0, 5, 6])

    def test_wrk2s_printed_spectrum_is_its_histogram(self):
        text = (FIXTURES / "wrk2-get.txt").read_text()
        parts = [json.loads(next(x for x in text.splitlines() if x.startswith(wrkresult.WRK_MARKER))[len(wrkresult.WRK_MARKER):])]
        series = loadseries.from_wrk(parts, T0, "wrk2", spectra=[text, text])
        whole = series.histograms["all"]
        self.assertEqual(whole.get_total_count(), 2 * 12000)  # two processes' spectra added up
        p = hdr.percentiles_ms(whole, [50, 99])
        # Counts sit at the printed values: p50 and p99 are read as the table's rows at or above them.
        self.assertAlmostEqual(p[50], 1.004, delta=0.002)
        self.assertGreaterEqual(p[99], 4.03)
        self.assertLessEqual(p[99], 4.2)
        self.assertEqual(series.seconds, [])
        self.assertIn("no answers per second", series.note)

    def test_debian_wrk_output_has_no_wrk2_spectrum(self):
        self.assertIsNone(loadseries.wrk2_spectrum("  Detailed Percentile spectrum:\n   Value(ms)   Percentile\n"))


class HgrmTest(unittest.TestCase):
    def test_the_file_reads_back_as_the_same_distribution_in_ms(self):
        h = hdr.histogram()
        for ms in (0.5, 1.0, 1.0, 2.0, 250.0):
            hdr.record_ms(h, ms)
        text = hdr.hgrm(h)
        self.assertTrue(text.lstrip().startswith("Value"))
        back = hdr.from_hgrm(text)
        self.assertEqual(back.get_total_count(), 5)
        # HdrHistogram reads a value as the top of its bucket (3 significant digits): never below.
        self.assertGreaterEqual(hdr.max_ms(back), 250.0)
        self.assertLessEqual(hdr.max_ms(back), 250.0 * 1.001)
        mean = next(line for line in text.splitlines() if line.startswith("#[Mean"))
        # Mean and standard deviation both in ms (the package writes the deviation in µs).
        self.assertIn(f"{h.get_mean_value() / 1000:.3f}", mean)
        self.assertIn(f"{h.get_stddev() / 1000:.3f}", mean)


def page(**values: float) -> dict[str, float]:
    """The recorded node page with some series set: name=value for series without labels but the
    application's, gc=seconds for the GC pauses (split over two collectors)."""
    base = promtext.parse((FIXTURES / "prometheus-node.txt").read_text())
    out = dict(base)
    for name, v in values.items():
        if name == "gc":
            young = next(k for k in base if k.startswith("jvm_gc_pause_seconds_sum{"))
            out[young] = v / 2
            out[young.replace("G1 Evacuation Pause", "G1 Remark").replace("minor", "major")] = v / 2
        elif name in ("sent", "received"):
            out[f'kvlab_repair_records_total{{application="kvlab",direction="{name}"}}'] = v
        else:
            out[f'{name}{{application="kvlab"}}'] = v
    return out


class PromTextTest(unittest.TestCase):
    def test_the_recorded_page_parses_into_series(self):
        p = promtext.parse((FIXTURES / "prometheus-node.txt").read_text())
        self.assertEqual(promtext.total(p, "process_cpu_time_ns_total"), 1.033e10)
        self.assertEqual(promtext.total(p, "kvlab_repair_records_total"), 0.0)
        self.assertEqual(promtext.total(p, "kvlab_rocksdb", property="estimate-num-keys"), 20000.0)
        # A metric's name is not the prefix of another's.
        self.assertEqual(promtext.total(p, "kvlab_rocksdb"), sum(v for k, v in p.items() if k.startswith("kvlab_rocksdb{")))
        self.assertIsNone(promtext.total(p, "kvlab_nothing_total"))

    def test_labels_with_commas_quotes_and_escapes(self):
        name, labels = promtext.labels('m{a="x,y",b="say \\"hi\\"",c="1"}')
        self.assertEqual((name, labels), ("m", {"a": "x,y", "b": 'say "hi"', "c": "1"}))
        p = promtext.parse('m{a="x,y"} 2\nm{a="z"} 3 1700000000000\n# HELP m x\nbroken line\n')
        self.assertEqual(promtext.total(p, "m"), 5.0)
        self.assertEqual(promtext.total(p, "m", a="x,y"), 2.0)
        # Micrometer ends a series' labels with a comma; a label's value may hold escapes.
        p = promtext.parse('# TYPE g gauge\ng{area="heap",id="a\\nb",} 7.0\ng{area="nonheap",} NaN\n')
        self.assertEqual(promtext.total(p, "g", area="heap"), 7.0)
        self.assertEqual(("g", {"area": "heap", "id": "a\nb"}), promtext.labels(next(iter(p))))

    def test_a_node_that_does_not_answer_is_a_reason_not_an_exception(self):
        got = promtext.fetch_all({"n0": "http://127.0.0.1:9"}, timeout=0.5)
        self.assertIsInstance(got["n0"], str)
        self.assertIn("/actuator/prometheus", got["n0"])


class NodeSeriesTest(unittest.TestCase):
    def sampler(self, pages: list[dict], times: list[float]) -> nodeseries.Sampler:
        feed, clock = iter(pages), iter(t for t in times for _ in (0, 1))  # a scrape reads the clock twice
        sampler = nodeseries.Sampler(lambda: next(feed), clock=lambda: next(clock))
        for _ in pages:
            sampler.sample()
        return sampler

    def test_each_interval_has_its_rates_amounts_levels_and_events(self):
        pages = [
            {"n0": page(process_cpu_time_ns_total=10e9, gc=0.100, kvlab_rocksdb_flushes_total=3)},
            {"n0": page(process_cpu_time_ns_total=10.5e9, gc=0.112, kvlab_hints_pending=7,
                        kvlab_rocksdb_flushes_total=5, kvlab_rocksdb_compactions_total=1)},
            {"n0": page(process_cpu_time_ns_total=11.5e9, gc=0.112, kvlab_hints_replayed_total=4, sent=10,
                        received=5, kvlab_rocksdb_flushes_total=5, kvlab_rocksdb_compactions_total=1)},
        ]
        nodes, events = self.sampler(pages, [T0 - 0.5, T0 + 0.5, T0 + 1.5]).part(T0)
        self.assertEqual(nodes["n0"], [
            {"t": -0.5, "cpu_cores": 0.5, "gc_pause_ms": 12.0, "hints_pending": 7.0, "hints_replayed": 0.0,
             "records_repaired": 0.0, "up": True},
            {"t": 0.5, "cpu_cores": 1.0, "gc_pause_ms": 0.0, "hints_pending": 0.0, "hints_replayed": 4.0,
             "records_repaired": 15.0, "up": True},
        ])
        self.assertEqual(events, [{"t": 0.0, "node": "n0", "kind": "compaction"},
                                  {"t": 0.0, "node": "n0", "kind": "flush"}, {"t": 0.0, "node": "n0", "kind": "flush"}])

    def test_a_node_that_did_not_answer_is_down_and_its_return_counts_since_its_last_answer(self):
        pages = [
            {"n0": page(process_cpu_time_ns_total=1e9), "n1": page(process_cpu_time_ns_total=1e9)},
            {"n0": "timed out", "n1": page(process_cpu_time_ns_total=2e9)},
            {"n0": page(process_cpu_time_ns_total=3e9, kvlab_rocksdb_flushes_total=1),
             "n1": page(process_cpu_time_ns_total=0.5e9)},  # n1 restarted: its counters began again
        ]
        nodes, events = self.sampler(pages, [T0, T0 + 1, T0 + 2]).part(T0)
        self.assertEqual([(s["t"], s["up"], s["cpu_cores"]) for s in nodes["n0"]], [(0.0, False, None), (1.0, True, 1.0)])
        self.assertIsNone(nodes["n0"][0]["hints_pending"])
        self.assertEqual([s["cpu_cores"] for s in nodes["n1"]], [1.0, 0.5])
        self.assertEqual(events, [{"t": 1.5, "node": "n0", "kind": "flush"}])

    def test_a_page_without_a_figure_leaves_it_null(self):
        bare = {"n0": {"kvlab_hints_pending": 2.0}}
        nodes, events = self.sampler([bare, bare], [T0, T0 + 1]).part(T0)
        self.assertEqual(nodes["n0"], [{"t": 0.0, "cpu_cores": None, "gc_pause_ms": None, "hints_pending": 2.0,
                                        "hints_replayed": None, "records_repaired": None, "up": True}])
        self.assertEqual(events, [])

    def test_the_thread_samples_until_stopped_and_survives_a_failing_executor(self):
        calls, logged = [], []

        def read():
            calls.append(1)
            if len(calls) == 2:
                raise RuntimeError("kubectl is gone")
            return {"n0": {"process_cpu_time_ns_total": 1e9 * len(calls)}}

        sampler = nodeseries.Sampler(read, interval_s=0.02, log=logged.append).start()
        while len(calls) < 6:
            threading.Event().wait(0.01)
        sampler.stop()
        self.assertFalse(sampler._thread.is_alive())
        self.assertEqual(len(logged), 1)
        self.assertIn("kubectl is gone", logged[0])
        ups = [s["up"] for s in sampler.tracks["n0"].samples]
        self.assertEqual(ups[0], False)  # the failed call marked the node down
        self.assertTrue(all(ups[1:]))
        self.assertGreaterEqual(len(ups), 4)


class WriteTest(unittest.TestCase):
    def test_files_of_a_k6_phase_and_the_raw_samples_removed(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "phases" / "03-mixed"
            out.mkdir(parents=True)
            csv = out / "k6-samples.csv"
            csv.write_text("\n".join([K6_HEADER, *k6_rows(0.5, 1.0, "get"), *k6_rows(1.5, 3.0, "put")]) + "\n")
            sampler = nodeseries.Sampler(lambda: {})
            with mock.patch.dict(os.environ, {timeseries.KEEP_SAMPLES_ENV: ""}):
                files = timeseries.write(out, T0, Samples("k6", csv=[csv], duration_s=2), sampler)
            self.assertFalse(csv.exists())
            rel = timeseries.relative(files, Path(tmp))
            self.assertEqual(rel, {"timeseries": "phases/03-mixed/timeseries.json", "hgrm": "phases/03-mixed/latency.hgrm",
                                   "hlog": "phases/03-mixed/latency.hlog",
                                   "hgrm_ops": {"get": "phases/03-mixed/latency-get.hgrm",
                                                "put": "phases/03-mixed/latency-put.hgrm"}})
            doc = json.loads((out / "timeseries.json").read_text())
            self.assertEqual(set(doc), {"interval_s", "t0_epoch", "load", "nodes", "events", "server"})
            self.assertIsNone(doc["server"], "no node timed a request")
            self.assertEqual(doc["t0_epoch"], T0)
            self.assertEqual([s["requests"] for s in doc["load"]["seconds"]], [1, 1])
            self.assertEqual(set(doc["load"]["ops"]), {"get", "put"})
            self.assertEqual((doc["nodes"], doc["events"]), ({}, []))
            self.assertEqual(hdr.from_hgrm((out / "latency.hgrm").read_text()).get_total_count(), 2)

    def test_samples_kept_when_asked_and_a_broken_output_leaves_load_null(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            csv = out / "k6-samples.csv"
            csv.write_text("not,a,k6,file\n")
            logged = []
            with mock.patch.dict(os.environ, {timeseries.KEEP_SAMPLES_ENV: "1"}):
                files = timeseries.write(out, T0, Samples("k6", csv=[csv]), None, logged.append)
            self.assertTrue(csv.exists())
            self.assertIsNone(files["hgrm"])
            doc = json.loads((out / "timeseries.json").read_text())
            self.assertEqual((doc["load"], doc["nodes"], doc["events"]), (None, None, None))
            self.assertIn("not a k6 CSV output", logged[0])


class SeriesExecutor(FakeExecutor):
    """A phase's load and nodes without processes: a k6 CSV of two requests, one node's page."""

    def __init__(self):
        super().__init__()
        self.scrapes = 0

    def prepare(self, spec, out, label):
        return Prepared(spec, out, label, time.monotonic())

    def node_metrics(self):
        self.scrapes += 1
        return {"n0": page(process_cpu_time_ns_total=1e9 * self.scrapes, kvlab_rocksdb_flushes_total=self.scrapes)}

    def run(self, prepared, status=None):
        t0 = timeseries.epoch_of(prepared.t0)
        csv = prepared.out / "k6-samples.csv"
        stamps = [round((t0 + 0.2) * 1e6), round((t0 + 1.2) * 1e6)]
        csv.write_text("\n".join([K6_HEADER] + [f"http_req_duration,{s},2.5,true,200,op=get," for s in stamps]) + "\n")
        threading.Event().wait(1.3)  # the sampler scrapes meanwhile
        result = {"achieved_rate": 2, "requested_rate": 2, "latency": {}}
        return load.PhaseRun(result, {}, [], [0], "", "", samples=Samples("k6", csv=[csv], duration_s=2))


class RunPhaseTest(unittest.TestCase):
    def test_a_phase_record_names_its_time_series_and_hgrm(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = settings.RunConfig(targets=["http://127.0.0.1:1"], pids=[], phases=["get"], duration_s=2,
                                   warmup_s=0, events=[], reports_dir=Path(tmp))
            executor = SeriesExecutor()
            with mock.patch.object(runrecord.Run, "finish", lambda run: run.dir):
                run_dir = phase_scenario.run_phases(cfg, executor)
            record = json.loads((run_dir / "run.json").read_text())["phases"][0]
            self.assertEqual(record["timeseries"], "phases/01-get/timeseries.json")
            self.assertEqual(record["hgrm"], "phases/01-get/latency.hgrm")
            doc = json.loads((run_dir / record["timeseries"]).read_text())
            self.assertEqual([s["requests"] for s in doc["load"]["seconds"]], [1, 1])
            self.assertGreaterEqual(len(doc["nodes"]["n0"]), 1)  # sampled during the load
            self.assertTrue(all(s["up"] for s in doc["nodes"]["n0"]))
            self.assertGreaterEqual(len([e for e in doc["events"] if e["kind"] == "flush"]), 1)
            self.assertTrue((run_dir / record["hgrm"]).exists())
            self.assertFalse((run_dir / "phases/01-get/k6-samples.csv").exists())


@unittest.skipUnless(shutil.which("wrk"), "wrk is not installed (make lab-tools installs it)")
class WrkPerSecondTest(unittest.TestCase):
    def test_the_script_counts_answers_and_errors_per_second(self):
        from lab.tests.test_latency import _Server

        from http.server import BaseHTTPRequestHandler

        class Missing(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 (http.server's name)
                code = 404 if "0000000000" in self.path else 200  # key 0 of KEYS=2: about half
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        server = _Server(("127.0.0.1", 0), Missing)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        t0_ms = round(timeseries.epoch_of(__import__("time").monotonic()) * 1000)
        env = os.environ | {"KEYS": "2", "WRK_STATUS": "1", "WRK_SERIES_T0_MS": str(t0_ms)}
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                ["wrk", "-t2", "-c4", "-d2s", "-s", str(SCRIPTS / "get.lua"), f"http://127.0.0.1:{server.server_port}"],
                capture_output=True, text=True, timeout=60, check=True, cwd=tmp, env=env,
            ).stdout
        raw = json.loads(next(x for x in out.splitlines() if x.startswith(wrkresult.WRK_MARKER))[len(wrkresult.WRK_MARKER):])
        per = raw["per_second"]
        self.assertEqual(per["t0_ms"], t0_ms)
        self.assertEqual(sum(per["requests"]), raw["requests"])
        self.assertEqual(sum(per["errors"]), raw["status_counts"]["404"])
        self.assertGreater(sum(per["errors"]), raw["requests"] // 4)
        self.assertIn(len(per["requests"]), (2, 3, 4))


if __name__ == "__main__":
    unittest.main()
