"""Self-tests of the soak's judgement: its windows, the drift of p99 and of each node's resources
from the first window to the last (a leak, a steady run, a noisy one), its verdict, and its report
section and figures, on synthetic soak runs written as a real one is (run.json, the soak phase's
latency.hlog and resources.json)."""

from __future__ import annotations

import json
import random
import tempfile
import unittest
from pathlib import Path

from lab import check, hdr, report, soakdrift
from lab.report import soakview
from lab.tests.test_lab import latency, phase, write_run

MIB = soakdrift.MIB
T0 = 1_795_642_000.0
NODES = ("n0", "n1", "n2")
FIGURES = ("p99_ms", "rss_bytes", "heap_after_gc_bytes", "open_files", "sst_bytes", "pending_compaction_bytes")


def steady(figure: str, node: str, t: float) -> float:
    """A node's resources in a run without drift (levels as a real three-node soak shows them)."""
    return {
        "rss_bytes": 700 * MIB,
        "heap_after_gc_bytes": 60 * MIB,
        "open_files": 310,
        "sst_bytes": 90 * MIB,
        "pending_compaction_bytes": 0.0,
    }[figure] * (1 + 0.01 * NODES.index(node))


def second_histogram(p99_ms: float, requests: int = 100):
    """A second of requests whose p99 is p99_ms: 98 % at half of it, 2 % at it."""
    h = hdr.histogram(hdr.SECOND_DIGITS)
    hdr.record_ms(h, p99_ms / 2, requests - requests // 50)
    hdr.record_ms(h, p99_ms, requests // 50)
    return h


def write_soak(root: Path, duration_s: int = 1800, window_s: int = 300, sample_s: int = 10,
               p99=lambda t: 4.0, level=steady, rate: int = 1050, p99_drift: float = 0.5) -> Path:
    """A soak run's directory: run.json from the lab's test run, a soak phase with its interval log
    and resource samples."""
    run_dir = write_run(root, "20261201-000000-soak", 1.0)
    doc = json.loads((run_dir / "run.json").read_text())
    soak = phase("soak", 1.0, rate, False) | {"dir": "phases/03-soak", "scenario": "mixed"}
    soak["spec"] = {"scenario": "mixed", "rate": rate, "duration_s": duration_s}
    soak["result"] |= {"duration_s": duration_s, "requests": rate * duration_s, "achieved_rate": rate * 0.999,
                       "error_rate": 0.0, "latency": {"all": latency(0.3)}}
    out = run_dir / soak["dir"]
    out.mkdir(parents=True)
    hdr.write_log(out / "latency.hlog", T0, ((t, second_histogram(p99(t))) for t in range(duration_s)))
    nodes = {n: [{"t": float(t), **{f: level(f, n, t) for f in FIGURES[1:]}, "heap_max_bytes": 512 * MIB}
                 for t in range(0, duration_s, sample_s)] for n in NODES}
    (out / "resources.json").write_text(json.dumps({"interval_s": sample_s, "t0_epoch": T0, "nodes": nodes,
                                                    "missing": {}}))
    soak |= {"hlog": f"{soak['dir']}/latency.hlog", "resources": f"{soak['dir']}/resources.json"}
    doc["kind"] = "soak"
    doc["config"] |= {"max_error_rate": 0.01, "events": [], "soak": {
        "duration_s": duration_s, "rate": "search", "share": 0.7, "window_s": window_s, "sample_s": sample_s,
        "p99_drift": p99_drift}}
    doc["soak"] = {"phase": "soak", "rate": rate, "highest_rate": 1500, "share": 0.7, "from": "search",
                   "scenario": "mixed"}
    doc["phases"] = [soak]
    (run_dir / "run.json").write_text(json.dumps(doc))
    return run_dir


def run_of(run_dir: Path) -> dict:
    return report.runs.load_run(run_dir)


def rows_by_check(v: dict) -> dict[str, dict]:
    return {r["check"].split(":")[0]: r for r in v["rows"]}


class WindowsTest(unittest.TestCase):
    def test_a_soak_of_six_windows_or_more_compares_its_first_and_last_window(self):
        self.assertEqual(soakdrift.windows(1800, 300), ((0, 300), (1500, 1800)))
        self.assertEqual(soakdrift.windows(3600, 300), ((0, 300), (3300, 3600)))

    def test_a_shorter_soak_compares_a_sixth_of_itself_at_each_end(self):
        self.assertEqual(soakdrift.windows(240, 300), ((0, 40), (200, 240)))
        self.assertEqual(soakdrift.windows(1200, 300), ((0, 200), (1000, 1200)))
        self.assertEqual(soakdrift.window_length(61, 300), 10)

    def test_the_section_says_how_a_short_soak_was_scaled(self):
        with tempfile.TemporaryDirectory() as tmp:
            view = soakview.view(run_of(write_soak(Path(tmp), duration_s=240, sample_s=5)))
        self.assertEqual(view["window"], "40 s")
        self.assertIn("seconds 200–240", view["windows"])
        self.assertIn("a sixth of the 4 min soak: 5 min from a 30 min soak on", view["windows"])


class DriftTest(unittest.TestCase):
    def verdict(self, **kw) -> dict:
        with tempfile.TemporaryDirectory() as tmp:
            return soakview.verdict(run_of(write_soak(Path(tmp), **kw)))

    def test_a_steady_run_passes_every_check(self):
        v = self.verdict()
        self.assertTrue(v["passed"], v)
        self.assertEqual((v["kind"], v["executor"]), ("soak", "local"))
        self.assertEqual({r["status"] for r in v["rows"]}, {"pass"})
        self.assertTrue(v["answer"].startswith("Yes: 1 049/s for 30 min at p99"), v["answer"])
        for title in ("p99", "RSS", "heap after GC", "open files", "RocksDB disk (SST files)", "pending compaction"):
            self.assertIn(f"{title}: the last 5 min against the first", [r["check"] for r in v["rows"]])
        p99 = rows_by_check(v)["p99"]
        self.assertEqual((p99["observed"], p99["gate"]), ("4.01 ms → 4.01 ms, +0.000 ms (+0.0 %)", "performance"))
        self.assertEqual(p99["target"], "≤ 6.02 ms (+50 % of the first window)")

    def test_a_leak_fails_the_memory_check_of_the_node_that_leaks(self):
        def leaking(figure, node, t):
            grows = figure == "rss_bytes" and node == "n1"
            return steady(figure, node, t) * (1 + (0.5 * t / 1800 if grows else 0))

        v = self.verdict(level=leaking)
        self.assertFalse(v["passed"])
        rss = rows_by_check(v)["RSS"]
        self.assertEqual((rss["status"], rss["gate"]), ("fail", "performance"))
        self.assertTrue(rss["observed"].startswith("n1 (nearest its limit): "), rss["observed"])
        self.assertIn("(+20 % of the first window, at least +32 MiB)", rss["target"])
        self.assertTrue(v["answer"].startswith("No: RSS: the last 5 min against the first: n1"), v["answer"])
        others = [r for r in v["rows"] if r is not rss]
        self.assertEqual({r["status"] for r in others}, {"pass"})
        with tempfile.TemporaryDirectory() as tmp:
            rows = soakview.view(run_of(write_soak(Path(tmp), level=leaking)))["rows"]
        self.assertEqual([(r["node"], r["status"]) for r in rows if r["figure"] == "RSS"],
                         [("n0", "within"), ("n1", "**a leak**"), ("n2", "within")])

    def test_open_files_and_heap_leaks_fail_too_and_a_latency_drift_is_a_performance_failure(self):
        def files(figure, node, t):
            return steady(figure, node, t) + (t / 10 if figure == "open_files" else 0)

        self.assertEqual(rows_by_check(self.verdict(level=files))["open files"]["status"], "fail")

        def heap(figure, node, t):  # 10 % of the heap's maximum is the floor: 51 MiB here
            return steady(figure, node, t) + (80 * MIB * t / 1800 if figure == "heap_after_gc_bytes" else 0)

        self.assertEqual(rows_by_check(self.verdict(level=heap))["heap after GC"]["status"], "fail")
        v = self.verdict(p99=lambda t: 4.0 + 4.0 * t / 1800)
        self.assertEqual(rows_by_check(v)["p99"]["status"], "fail")
        self.assertFalse(v["passed"])
        self.assertEqual(rows_by_check(self.verdict(p99=lambda t: 4.0 + 4.0 * t / 1800, p99_drift=1.5))["p99"]["status"],
                         "pass")

    def test_a_noisy_run_without_drift_passes(self):
        rng = random.Random(7)

        def noisy(figure, node, t):
            spike = 3.0 if rng.random() < 0.03 else 1.0  # a sample caught mid-compaction or before a GC
            return steady(figure, node, t) * rng.uniform(0.9, 1.1) * spike

        v = self.verdict(level=noisy, p99=lambda t: rng.choice([3.0, 4.0, 5.0, 30.0 if t % 97 == 0 else 4.0]))
        self.assertTrue(v["passed"], [r for r in v["rows"] if r["status"] != "pass"])

    def test_growth_that_levels_off_early_is_no_leak(self):
        def cache_filling(figure, node, t):  # RSS grows while a cache fills in the first minutes, then holds
            return steady(figure, node, t) + (min(t, 400) / 400 * 100 * MIB if figure == "rss_bytes" else 0)

        self.assertTrue(self.verdict(level=cache_filling)["passed"])

    def test_pending_compaction_from_nothing_is_judged_against_its_floor(self):
        def behind(figure, node, t):
            return steady(figure, node, t) + (200 * MIB * t / 1800 if figure == "pending_compaction_bytes" else 0)

        row = rows_by_check(self.verdict(level=behind))["pending compaction"]
        self.assertEqual(row["status"], "fail")
        self.assertIn("at least +64 MiB", row["target"])

    def test_a_figure_no_node_reported_is_information_not_a_failure(self):
        def no_heap(figure, node, t):
            return None if figure == "heap_after_gc_bytes" else steady(figure, node, t)

        v = self.verdict(level=no_heap)
        row = rows_by_check(v)["heap after GC"]
        self.assertEqual((row["status"], row["gate"]), ("info", "none"))
        self.assertTrue(row["observed"].startswith("not measured"))
        self.assertTrue(v["passed"])

    def test_the_slo_and_the_rate_are_checked_over_the_whole_soak(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = run_of(write_soak(Path(tmp)))
            soak = run["phases"][-1]
            soak["result"]["achieved_rate"] = 900
            soak["result"]["latency"]["all"]["percentiles"]["p99"] = 12.0
            v = soakview.verdict(run)
        rows = rows_by_check(v)
        self.assertEqual(rows["rate achieved of the soak's"]["status"], "fail")
        self.assertIn("70 % of 1 500/s, the highest mixed rate the search at its start sustained",
                      rows["rate achieved of the soak's"]["target"])
        self.assertEqual(rows["p99 over the 30 min"]["status"], "fail")
        self.assertFalse(v["passed"])

    def test_the_p99_held_to_the_slo_is_that_of_all_requests_with_each_operation_beside_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = run_of(write_soak(Path(tmp)))
            latency = run["phases"][-1]["result"]["latency"]
            latency["all"]["percentiles"]["p99"] = 6.65
            latency["get"] = {**latency["all"], "percentiles": {**latency["all"]["percentiles"], "p99": 12.0}}
            latency["put"] = {**latency["all"], "percentiles": {**latency["all"]["percentiles"], "p99": 3.0}}
            v = soakview.verdict(run)
        row = rows_by_check(v)["p99 over the 30 min"]
        self.assertEqual(row["observed"], "6.65 ms (get 12.0 ms, put 3.00 ms)")
        self.assertEqual(row["status"], "pass")
        self.assertIn("at p99 6.65 ms", v["answer"])

    def test_a_search_that_sustained_nothing_leaves_nothing_to_soak(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = run_of(write_soak(Path(tmp)))
        run["soak"] |= {"rate": None, "highest_rate": None}
        run["phases"] = []
        v = soakview.verdict(run)
        self.assertFalse(v["passed"])
        self.assertEqual(v["rows"][0]["status"], "fail")
        self.assertIn("no rate of the mixed search", v["answer"])
        self.assertIsNone(soakview.view(run))


class WindowLatencyTest(unittest.TestCase):
    def test_a_windows_p99_is_that_of_its_requests_not_an_average_of_seconds(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "latency.hlog"
            # 9 quiet seconds and one whose every request is slow: a tenth of the window is slow.
            slow = hdr.histogram(hdr.SECOND_DIGITS)
            hdr.record_ms(slow, 50.0, 100)
            hdr.write_log(path, T0, ((t, slow if t == 5 else second_histogram(2.0)) for t in range(20)))
            first, second = soakdrift.latency_windows(path, ((0, 10), (10, 20)))
        self.assertEqual(first["requests"], 1000)
        self.assertAlmostEqual(first["p99_ms"], 50.0, delta=0.5)
        self.assertAlmostEqual(second["p99_ms"], 2.0, delta=0.02)


class SoakReportTest(unittest.TestCase):
    def test_the_report_has_the_drift_section_and_a_figure_per_quantity(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = write_soak(Path(tmp), duration_s=240, sample_s=5)
            report.generate(run_dir)
            md = (run_dir / "report.md").read_text()
            self.assertIn("## Soak: drift over 4 min", md)
            self.assertLess(md.index("## Soak: drift"), md.index("## Findings"))
            self.assertIn("| RSS | n1 | 707 MiB | 707 MiB | +0.0 MiB (+0.0 %) | 848 MiB | within |", md)
            for name in ("p99", "rss", "heap-after-gc", "open-files", "sst", "pending-compaction"):
                self.assertTrue((run_dir / "plots" / f"soak-{name}.png").is_file(), name)
                self.assertIn(f"(plots/soak-{name}.png)", md)
            self.assertEqual(check.problems(run_dir), [])
            (run_dir / "plots" / "soak-rss.png").unlink()
            (run_dir / "report.md").write_text(md.replace("| open files | n0 |", "| files | n0 |"))
            self.assertIn("the soak's report has no figure of RSS", check.problems(run_dir))
            (run_dir / "report.md").write_text(md.replace("| open files |", "| files |"))
            self.assertIn("the soak's drift table has no row of open files", check.problems(run_dir))


if __name__ == "__main__":
    unittest.main()
