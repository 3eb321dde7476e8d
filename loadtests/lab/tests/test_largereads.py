"""The large-reads benchmark's figures and verdict: the capacity computed as the node computes its
budget, the goodput by its definition, the statuses and the small key's percentile, each verdict row
failing on what it guards (fixtures/runs/largereads.json: a real run's run.json), and its report
opening with that verdict."""

from __future__ import annotations

import copy
import json
import math
import tempfile
import unittest
from pathlib import Path

from lab import check, firstscreen, largereads, largereadsfigures as f, report
from lab.report import verdicts
from lab.tests.test_lab import write_run

RUN = Path(__file__).resolve().parent / "fixtures" / "runs" / "largereads.json"
MIB = 1 << 20


def fixture() -> dict:
    return json.loads(RUN.read_text())


def rows(run: dict) -> dict[str, dict]:
    return {r["check"].split(" (")[0]: r for r in verdicts.build(run)["rows"]}


class CapacityTest(unittest.TestCase):
    def test_three_128_mib_heaps_hold_nine_reads_of_1_mib_at_3_of_3(self):
        # As ConcurrentLargeReadsIT computes it: a quarter of the heap, 40 % kept for the peers, a
        # 1 MiB record with its header in two 1 MiB regions, three of them per read.
        cap = f.capacity([32 * MIB] * 3, MIB, 3, MIB, 0.4, MIB)
        self.assertEqual(2 * MIB, cap.record_bytes)
        self.assertEqual((32 * MIB - int(32 * MIB * 0.4),) * 3, cap.own_bytes)
        self.assertEqual((3, 3, 3), cap.per_node)
        self.assertEqual(9, cap.reads)

    def test_a_record_under_half_a_region_takes_its_size(self):
        self.assertEqual(1000, f.footprint(1000, MIB))
        self.assertEqual(MIB, f.footprint(MIB // 2, MIB))
        self.assertEqual(3 * MIB, f.footprint(2 * MIB + 1, MIB))
        self.assertEqual(MIB + 13, f.footprint(MIB + 13, 0))

    def test_no_share_for_peers_leaves_the_coordinator_the_whole_budget(self):
        self.assertEqual(32 * MIB, f.own_share(32 * MIB, 0.0, 2 * MIB))
        self.assertEqual(5, f.capacity([32 * MIB], MIB, 3, MIB, 0.0, MIB).reads)
        # Too small for two sides: one pool, as MemoryProperties.budget makes it.
        self.assertEqual(3 * MIB, f.own_share(3 * MIB, 0.4, 2 * MIB))

    def test_g1_chooses_1_mib_regions_for_small_heaps_and_more_for_large(self):
        self.assertEqual(MIB, f.g1_region_bytes(128 * MIB))
        self.assertEqual(4 * MIB, f.g1_region_bytes(8 << 30))
        self.assertEqual(32 * MIB, f.g1_region_bytes(1 << 40))

    def test_the_heap_is_read_from_the_java_options(self):
        self.assertEqual(128 * MIB, largereads.max_heap("-XX:+UseG1GC -Xmx128m"))
        self.assertEqual(2 << 30, largereads.max_heap("-Xmx2g"))
        with self.assertRaises(SystemExit):
            largereads.max_heap("-Xms64m")


class FiguresTest(unittest.TestCase):
    def test_goodput_is_the_time_on_whole_200s_over_the_burst(self):
        samples = [
            f.Sample(0.0, 2.0, 200),
            f.Sample(1.0, 4.0, 200),
            f.Sample(0.0, 0.01, 503),
            f.Sample(0.0, 9.0, 504),
            f.Sample(0.0, 5.0, 200, whole=False),
        ]
        self.assertAlmostEqual(0.5, f.goodput(samples, 10.0))
        self.assertTrue(math.isnan(f.goodput(samples, 0)))

    def test_the_summary_counts_statuses_and_shares(self):
        large = [f.Sample(0, 1, 200)] * 3 + [f.Sample(0, 0.001, 503)] * 95 + [f.Sample(0, 1, 504), f.Sample(0, 10, 0)]
        small = [f.Sample(0, t / 1000, 200) for t in range(1, 101)]
        cap = f.capacity([32 * MIB] * 3, MIB, 3, MIB, 0.4, MIB)
        s = f.summary(large, small, 2.0, cap, MIB)
        self.assertEqual({"0": 1, "200": 3, "503": 95, "504": 1}, s["statuses"])
        self.assertEqual(3, s["served"])
        self.assertAlmostEqual(1.5, s["served_per_s"])
        self.assertAlmostEqual(1.5, s["goodput"])
        self.assertAlmostEqual(1.5 / 9, s["goodput_share"])
        self.assertAlmostEqual(0.01, s["timed_out_share"])
        self.assertEqual(1, s["no_answer"])
        self.assertAlmostEqual(99.0, s["small_p99_ms"])
        self.assertAlmostEqual(100.0, s["small_max_ms"])

    def test_the_percentile_is_the_nearest_rank(self):
        self.assertEqual(99, f.percentile(list(range(1, 101)), 99))
        self.assertEqual(5, f.percentile([5, 1], 99))
        self.assertEqual(1, f.percentile([5, 1], 50))
        self.assertTrue(math.isnan(f.percentile([], 99)))

    def test_values_differ_per_value_and_position(self):
        a, b = largereads.value_of(0, MIB), largereads.value_of(1, MIB)
        self.assertEqual(MIB, len(a))
        self.assertNotEqual(a, b)
        self.assertNotEqual(a[:32], a[32:64][::-1])


class VerdictTest(unittest.TestCase):
    def test_the_real_run_passes_all_but_the_small_key(self):
        v = verdicts.build(fixture())
        self.assertEqual("largereads", v["kind"])
        self.assertEqual("kvlab large reads: 3 nodes at -Xmx128m, 96 clients reading 1 MiB at 3/3 for 10 s", v["title"])
        self.assertFalse(v["passed"])
        r = rows(fixture())
        self.assertEqual(("info", "none"), (r["capacity"]["status"], r["capacity"]["gate"]))
        self.assertIn("9 reads (3 + 3 + 3)", r["capacity"]["observed"])
        self.assertEqual("pass", r["goodput"]["status"])
        self.assertEqual("pass", r["504 share"]["status"])
        self.assertEqual("pass", r["statuses of the large reads"]["status"])
        self.assertEqual(("fail", "performance"), (r["small key during the burst"]["status"], r["small key during the burst"]["gate"]))
        self.assertEqual(("pass", "data"), (r["every node alive, no OutOfMemoryError, every value whole"]["status"], "data"))
        self.assertIn("missed: small key during the burst.", v["answer"])

    def changed(self, **figures) -> dict:
        run = copy.deepcopy(fixture())
        run["largereads"] |= figures
        return run

    def test_a_fast_small_key_passes_the_whole_verdict(self):
        run = self.changed(small_p99_ms=12.0, small_max_ms=20.0, small_statuses={"200": 200})
        v = verdicts.build(run)
        self.assertTrue(v["passed"], [r for r in v["rows"] if r["status"] == "fail"])
        self.assertIn("every target met", v["answer"])

    def test_each_target_fails_its_own_row(self):
        fast = {"small_p99_ms": 12.0, "small_max_ms": 20.0, "small_statuses": {"200": 200}}
        cases = {
            "goodput": {"goodput": 4.4, "goodput_share": 4.4 / 9},
            "504 share": {"timed_out": 127, "timed_out_share": 0.0101},
            "small key during the burst": {"small_p99_ms": 50.0},
            "statuses of the large reads": {"statuses": {"200": 155, "503": 12473, "500": 1}},
        }
        for check, figures in cases.items():
            with self.subTest(check):
                r = rows(self.changed(**fast | figures))
                self.assertEqual("fail", r[check]["status"])
                self.assertEqual([check], [c for c, x in r.items() if x["status"] == "fail"])

    def test_a_small_key_refused_fails_even_when_fast(self):
        r = rows(self.changed(small_p99_ms=12.0, small_statuses={"200": 199, "503": 1}))
        self.assertEqual("fail", r["small key during the burst"]["status"])
        self.assertIn("1 not served", r["small key during the burst"]["observed"])

    def test_a_node_that_died_or_ran_out_of_memory_fails_the_data_gate(self):
        for bad in ({"alive": False}, {"answers": False}, {"out_of_memory": True}):
            with self.subTest(bad):
                run = copy.deepcopy(fixture())
                run["largereads"]["health"][1] |= bad
                row = rows(run)["every node alive, no OutOfMemoryError, every value whole"]
                self.assertEqual(("fail", "data"), (row["status"], row["gate"]))
                self.assertIn("n1:", row["observed"])
        torn = rows(self.changed(torn=2))["every node alive, no OutOfMemoryError, every value whole"]
        self.assertEqual("fail", torn["status"])


class ReportTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.run_dir = write_run(Path(tmp.name), "20261127-000000-large-reads", 1.0)
        (self.run_dir / "run.json").write_text(RUN.read_text())
        report.generate(self.run_dir)

    def test_the_report_opens_with_the_verdict_and_shows_the_burst(self):
        md = (self.run_dir / "report.md").read_text()
        verdict = json.loads((self.run_dir / "verdict.json").read_text())
        self.assertTrue(md.startswith(f"# {verdict['title']}\n\n<div class=\"verdict\""))
        box = md.split("</div>")[0]
        for r in verdict["rows"]:
            self.assertIn(f"| {r['check']} |", box)
        self.assertIn("Goodput: the clients' time on reads that answered 200", box)
        self.assertIn("## Large reads: the burst", md)
        self.assertIn("6 values of 1048576 bytes written at 3/3", md)
        self.assertIn("| statuses | 200: 155, 503: 12 473, 504: 13 |", md)
        self.assertIn("| n1 | 14107 | yes | yes | no |", md)

    def test_lab_check_finds_it_whole_and_misses_its_section(self):
        self.assertEqual([], check.problems(self.run_dir))
        md = self.run_dir / "report.md"
        md.write_text(md.read_text().replace("## Large reads: the burst", "## Something else"))
        self.assertIn("report.md has no section of the large reads' burst", check.problems(self.run_dir))

    @unittest.skipUnless(firstscreen.chromium(), "no chromium here: loadtests/tools/install.sh chromium")
    def test_its_first_screen_answers_the_question(self):
        screen = firstscreen.look(self.run_dir / "report.html")
        self.assertEqual([], firstscreen.problems(self.run_dir, screen))


if __name__ == "__main__":
    unittest.main()
