"""Self-tests of a long phase's series (a soak's): the per-second histograms kept encoded behind
the newest second (bounded memory) with the same figures as kept whole, k6's gzipped samples (and
one cut short), rows that stand for several requests alike, and the interval log every k6 phase
writes, from which a span of seconds has its exact percentiles."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from lab import hdr, loadseries, timeseries
from lab.k8s import manifests, outputs
from lab.loadseries import K6Reader, Samples
from lab.tests.test_timeseries import K6_HEADER, T0, k6_rows


def rows(seconds: int, per_second: int = 5) -> list[str]:
    """k6's rows of a phase: per_second GETs a second, second t's at 1 + t % 7 ms."""
    lines = [K6_HEADER]
    for t in range(seconds):
        for i in range(per_second):
            lines += k6_rows(t + (i + 0.5) / per_second, 1.0 + t % 7 + i * 0.1)
    return [line + "\n" for line in lines]


class BoundedSecondsTest(unittest.TestCase):
    def test_only_the_last_seconds_stay_decoded_and_the_figures_are_those_of_whole_histograms(self):
        lines = rows(200)
        reader = K6Reader(T0)
        reader.read(lines)
        seconds = reader.op_seconds["get"]
        self.assertLessEqual(len(seconds.live), loadseries.LIVE_S + 1)
        self.assertEqual(len(seconds.encoded), 200 - len(seconds.live))
        with mock.patch.object(loadseries, "LIVE_S", 10**9):
            whole = K6Reader(T0)
            whole.read(lines)
            self.assertEqual(len(whole.op_seconds["get"].encoded), 0)
            self.assertEqual(whole.series().seconds, reader.series().seconds)

    def test_a_late_sample_of_an_encoded_second_still_counts(self):
        reader = K6Reader(T0)
        reader.read(rows(100))
        reader.add(T0 + 3.5, 40.0, True, "get")
        second = reader.series().seconds[3]
        self.assertEqual((second["requests"], second["errors"], second["max_ms"]), (6, 1, 40.0))

    def test_seconds_of_several_ops_merge_second_by_second(self):
        lines = [K6_HEADER]
        for t in range(120):
            lines += k6_rows(t + 0.2, 2.0, "get") + k6_rows(t + 0.7, 8.0, "put")
        reader = K6Reader(T0)
        reader.read(line + "\n" for line in lines)
        series = reader.series()
        self.assertEqual({s["requests"] for s in series.seconds}, {2})
        self.assertEqual({s["max_ms"] for s in series.seconds}, {8.0})
        self.assertLessEqual(len(series.per_second.live), loadseries.LIVE_S + 1)

    def test_a_wrk_phase_longer_than_the_seconds_kept_decoded_has_its_series(self):
        t0 = 1_700_000_000.0
        per = {"t0_ms": t0 * 1000, "requests": [100] * 50, "errors": [0] * 49 + [2]}
        series = loadseries.from_wrk([{"per_second": per}], t0, "wrk")
        self.assertEqual(len(series.seconds), 50)
        self.assertEqual(series.seconds[49]["errors"], 2)
        self.assertEqual(sum(s["requests"] for s in series.seconds), 5000)


class SamplesFileTest(unittest.TestCase):
    def test_the_local_k6_writes_gzipped_samples_and_they_are_read(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / loadseries.K6_SAMPLES_FILE
            self.assertTrue(path.name.endswith(".gz"))  # k6 gzips a CSV output named so
            with gzip.open(path, "wt") as f:
                f.writelines(rows(3))
            series = Samples("k6", csv=[path], duration_s=3).series(T0)
        self.assertEqual([s["requests"] for s in series.seconds], [5, 5, 5])
        self.assertEqual(series.note, "")

    def test_an_output_cut_short_gives_the_samples_it_holds_and_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / loadseries.K6_SAMPLES_FILE
            data = gzip.compress("".join(rows(60)).encode())
            path.write_bytes(data[: len(data) * 2 // 3])
            series = loadseries.read_k6_csv([path], T0)
        self.assertGreater(sum(s["requests"] for s in series.seconds), 0)
        self.assertLess(sum(s["requests"] for s in series.seconds), 300)
        self.assertIn("ended early", series.note)

    def test_a_row_with_a_count_stands_for_that_many_requests(self):
        header = "metric_name,timestamp,metric_value,expected_response,extra_tags,count"
        reader = K6Reader(T0)
        reader.read([header, f"http_req_duration,{round((T0 + 1.5) * 1e6)},4.0,true,op=get,250",
                     f"http_req_duration,{round((T0 + 1.5) * 1e6)},90.0,false,op=get,3"])
        second = reader.series().seconds[1]
        self.assertEqual((second["requests"], second["errors"], second["max_ms"]), (253, 3, 90.0))
        self.assertEqual(reader.whole.get_total_count(), 253)


class IntervalLogTest(unittest.TestCase):
    def test_a_k6_phase_writes_every_second_to_its_interval_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            path = out / loadseries.K6_SAMPLES_FILE
            with gzip.open(path, "wt") as f:
                f.writelines(rows(90))
            with mock.patch.dict(os.environ, {timeseries.KEEP_SAMPLES_ENV: ""}):
                files = timeseries.write(out, T0, Samples("k6", csv=[path], duration_s=90), None)
            self.assertFalse(path.exists())
            self.assertEqual(files["hlog"], out / "latency.hlog")
            self.assertIn(f"#[StartTime: {T0:.3f} (seconds since epoch)", files["hlog"].read_text())
            logged = list(hdr.read_log(files["hlog"]))
            seconds = json.loads((out / "timeseries.json").read_text())["load"]["seconds"]
        self.assertEqual([t for t, _ in logged], [float(s["t"]) for s in seconds])
        for (_, h), s in zip(logged, seconds):
            self.assertEqual(h.get_total_count(), s["requests"])
            self.assertAlmostEqual(hdr.percentiles_ms(h, [99])[99], s["p99_ms"], delta=s["p99_ms"] * 0.01)

    def test_wrk_phases_have_no_interval_log(self):
        parts = [{"requests": 3, "per_second": {"t0_ms": T0 * 1000, "requests": [3], "errors": [0]}}]
        with tempfile.TemporaryDirectory() as tmp:
            files = timeseries.write(Path(tmp), T0, Samples("wrk", wrk_parts=parts, duration_s=1), None)
        self.assertNotIn("hlog", files)


class PodSamplesTest(unittest.TestCase):
    """k8s/loadgen/job.sh with a stand-in k6 whose samples of a long phase pass the log's limit."""

    def test_samples_too_large_for_the_log_are_summed_per_second_and_read_as_as_many_requests(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            start_ns = time.time_ns() + 200_000_000
            (tmp / "start-at").write_text(str(start_ns))
            (tmp / "bin").mkdir()
            k6 = tmp / "bin" / "k6"
            # 60 seconds of 200 requests (1.000 to 1.199 ms, every 20th failed) in k6's columns, other rows between.
            header = ("metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,"
                      "proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata")
            lines = [header]
            for t in range(60):
                for i in range(200):
                    stamp = start_ns // 1000 + t * 1_000_000 + i * 4000
                    ok = "false" if i % 20 == 0 else "true"
                    lines.append(f"http_reqs,{stamp},1,,,,{ok},,GET,,,default,,200,,,,op=get,")
                    lines.append(f"http_req_duration,{stamp},{1 + i / 1000:.3f},,,,{ok},,GET,,,default,,200,,,,op=get,")
            (tmp / "k6-output.csv.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
            k6.write_text(
                "#!/bin/bash\n"
                'if [ "$1" = version ]; then echo "k6 v0.0.0 (test)"; exit 0; fi\n'
                f'cp {tmp / "k6-output.csv.gz"} "$K6_SAMPLES"\n'
            )
            k6.chmod(0o755)
            env = os.environ | {"PATH": f"{tmp / 'bin'}:{os.environ['PATH']}", "WORK": str(tmp),
                                "K6_SAMPLES": str(tmp / loadseries.K6_SAMPLES_FILE), "SAMPLES_MAX_BYTES": "20000"}
            p = subprocess.run(["bash", str(manifests.JOB_SH), "k6", "run", "/scripts/k6/mixed.js"], env=env,
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("KVLAB-JOB samples-summed", p.stdout)
        out = outputs.parse_job_log(p.stdout, 0)
        self.assertLess(len(out.samples), 40000)
        reader = K6Reader(start_ns / 1e9)
        reader.read(out.samples.decode().splitlines(keepends=True))
        series = reader.series(duration_s=60)
        self.assertEqual([s["requests"] for s in series.seconds], [200] * 60)
        self.assertEqual({s["errors"] for s in series.seconds}, {10})
        self.assertEqual({s["max_ms"] for s in series.seconds}, {1.2})  # 1.199 rounded up
        self.assertEqual(reader.whole.get_total_count(), 12000)
        self.assertEqual(series.note, loadseries.SUMMED_NOTE)

    def test_a_pods_work_directory_has_room_for_its_phases_samples(self):
        self.assertEqual(manifests.work_size({"RATE": "1000", "DURATION": "30s"}), "64Mi")
        self.assertEqual(manifests.work_size({"RATE": "1000", "DURATION": "1800s"}), "220Mi")
        self.assertEqual(manifests.work_size({"FILL_VUS": "16"}), "64Mi")
        self.assertEqual(loadseries.K6_SAMPLES_FILE, "k6-samples.csv.gz")  # the pods' k6 gzips as the local one


if __name__ == "__main__":
    unittest.main()
