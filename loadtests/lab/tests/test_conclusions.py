"""Self-tests of the drafted conclusion and of `lab check`'s warnings on a conclusion, on trimmed
copies of three example runs (fixtures/conclusions: their run.json, the measured phases' time
series, and the conclusions first published with them, which contradicted their data), and on
numbers written the way writers write them."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from lab import check, conclusions, report
from lab.conclusions import drafts, files, numbers, verify
from lab.report import runs
from lab.tests.test_lab import write_run

EXAMPLES = Path(__file__).resolve().parent / "fixtures" / "conclusions"
LAB, SATURATION, FAULTS = "20261125-221658-lab", "20261125-221425-saturation", "20261125-220938-faults"


class ExampleCase(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        for name in (LAB, SATURATION, FAULTS):
            shutil.copytree(EXAMPLES / name, self.root / name)

    def warnings(self, name: str, text: str | None = None) -> list[str]:
        d = self.root / name
        return verify.conclusion_warnings(text if text is not None else (d / "conclusion.md").read_text(), d)

    def only(self, warnings: list[str], part: str) -> str:
        hits = [w for w in warnings if part in w]
        self.assertEqual(1, len(hits), f"one warning on {part!r} in {warnings}")
        return hits[0]


class PublishedConclusionsTest(ExampleCase):
    """The contradictions the first published conclusions held are each caught."""

    def test_the_lab_conclusion_said_no_flush_or_compaction_ran_and_gc_pauses_were_5_to_8_ms(self):
        found = self.warnings(LAB)
        flushes = self.only(found, "Flushes and compactions did not run during the timed phases")
        self.assertIn("mixed: 3 flush events (n0, n1, n2)", flushes)
        self.assertIn("mixed: 3 compaction events (n0, n1, n2)", flushes)
        gc = self.only(found, "“5-8 ms”")
        self.assertIn("15.4 ms (mixed n0, its only pause)", gc)
        self.assertIn("11.0 ms (mixed n2", gc)
        # Its mixed p99 was the GET requests', not the phase's.
        self.assertIn("the p99 of mixed is 3.31 ms (3.36 ms is its GET requests', not the phase's)", self.only(found, "“3.4 ms”"))
        self.assertIn("4 min 19 s: nowhere in the run's data", "\n".join(found))
        self.assertEqual(4, len(found), found)

    def test_the_saturation_conclusion_quoted_a_p99_at_1000_per_s_the_run_did_not_measure(self):
        found = self.warnings(SATURATION)
        self.assertEqual(["“p99 3.3 ms”: the p99 of get@1000 is 5.15 ms"], found)

    def test_a_sentence_that_links_another_report_is_checked_against_that_run(self):
        text = (self.root / SATURATION / "conclusion.md").read_text().replace(
            "the default `make lab`'s short search,", f"the default `make lab`'s short search ([its report](../{LAB}/report.md)),"
        )
        self.assertIn(f"../{LAB}/report.md", text)
        wrong = self.only(self.warnings(SATURATION, text), "“p99 3.3 ms”")
        self.assertIn(f"the p99 of get@1000 is 4.03 ms (in {LAB}, which the sentence links)", wrong)
        fixed = text.replace("p99 3.3 ms at 1 000/s where this one measured 5.2 ms", "p99 4.03 ms at 1 000/s")
        self.assertEqual([], self.warnings(SATURATION, fixed))

    def test_the_fault_conclusion_said_p99_was_1000_ms_for_the_whole_cut_off(self):
        found = self.warnings(FAULTS)
        wrong = self.only(found, "“p99 per second is 1 000 ms”")
        self.assertIn("in the cutoff of n2 (seconds 120.1 to 135.1) the series shows it in 2 of 14 full seconds (121, 122)", wrong)
        self.assertNotIn("pause of n2", wrong, "the pause held p99 at the timeout throughout")
        self.assertEqual(1, len(found), found)

    def test_corrected_sentences_pass(self):
        text = (self.root / LAB / "conclusion.md").read_text()
        for wrong, right in (
            ("4 min 19 s", "3 min 56 s"),
            ("3.4 ms for the mix", "3.3 ms for the mix"),
            ("The GC pauses (5-8 ms, a few per node per phase)", "The GC pauses (5-15 ms, a few per node per phase)"),
            ("Flushes and compactions did not run during the timed phases", "Flushes and compactions did not run during put and get"),
        ):
            self.assertIn(wrong, text)
            text = text.replace(wrong, right)
        self.assertEqual([], self.warnings(LAB, text))


class ClaimsTest(ExampleCase):
    def test_a_p99_quoted_for_a_phase_a_rate_or_a_step(self):
        for sentence, wrong in (
            ("At 500/s p99 was 4.1 ms for PUT and 2.6 ms for GET.", False),
            ("At 500/s p99 was 4.1 ms for PUT and 3.6 ms for GET.", True),
            ("PUT 4.1 ms, GET 2.6 ms, mixed 3.3 ms at p99.", False),
            ("p99: PUT 4.1 ms, GET 2.6 ms, mixed 3.9 ms.", True),
            ("It sustained 2 250 GET/s (p99 9.0 ms) and missed at 3 375/s (p99 11.8 ms).", False),
            ("It sustained 2 250 GET/s (p99 8.0 ms).", True),
            ("p50 stayed at 0.39-0.43 ms over the steps.", False),
            ("p50 stayed at 0.41-0.43 ms over the steps.", True),
            ("p99 climbed 4.0 → 5.7 → 9.0 → 11.8 ms over the steps.", False),
            ("p99 climbed 4.0 → 5.7 → 9.9 → 11.8 ms over the steps.", True),
            ("p99 stayed under 5 ms for PUT.", False),
            ("p99 stayed under 4 ms for PUT.", True),
        ):
            with self.subTest(sentence):
                self.assertEqual(wrong, bool(self.warnings(LAB, sentence)), self.warnings(LAB, sentence))

    def test_flushes_compactions_gc_errors_and_the_slo(self):
        for sentence, wrong in (
            ("No flush or compaction ran during put and get.", False),
            ("No compaction ran during mixed.", True),
            ("Mixed saw 3 flushes.", False),
            ("Mixed saw 4 flushes.", True),
            ("Mixed cost 3 times the no-op route, with 3 flushes.", False),
            ("Mixed's worst second was second 3; nothing else ran around it (no fault, flush, compaction, GC pause or profiler).", False),
            ("The p99 of mixed was 3.31 ms (GET 3.36 ms).", False),
            ("The p99 of mixed was 3.31 ms (GET 4.50 ms).", True),
            ("A compaction ran during put.", True),
            ("GC pauses in put were 5-8 ms.", False),
            ("GC pauses in mixed averaged 5.9-15.4 ms per node.", False),
            ("GC pauses in mixed averaged 5.9-12 ms per node.", True),
            ("No GC pause exceeded 20 ms.", False),
            ("No GC pause in mixed exceeded 10 ms.", True),
            ("At most 15 ms of GC in one second in mixed.", False),
            ("At most 12 ms of GC in one second in mixed.", True),
            ("No request failed in any phase.", False),
            ("Every phase met the 10 ms SLO.", False),
            ("Every phase met the 5 ms SLO.", True),
            ("Every step met the SLO.", True),
            ("No rate was sustained within the SLO at 3 375/s.", False),
            ("Its worst second was second 3 (p99 22.7 ms) in PUT.", False),
            ("Its worst second was second 4 in PUT.", True),
            ("PUT's p99 was about 25 ms in second 3.", False),
            ("PUT's p99 was 12 ms in second 3.", True),
        ):
            with self.subTest(sentence):
                self.assertEqual(wrong, bool(self.warnings(LAB, sentence)), self.warnings(LAB, sentence))

    def test_a_failure_claim_and_a_fault_window(self):
        self.assertIn("of faults's requests failed", self.warnings(FAULTS, "No request failed.")[0])
        self.assertEqual([], self.warnings(FAULTS, "p99 per second was 1 000 ms for the whole of the pause."))
        self.assertTrue(self.warnings(FAULTS, "p99 per second was 1 000 ms throughout the kill."))

    def test_development_history_is_named(self):
        for phrase in ("Before this change p99 was higher.", "The old jar did worse.", "It ran with uncommitted changes.",
                       "The jar from before the read tier was slower.", "The changes not yet committed were docs."):
            with self.subTest(phrase):
                self.assertTrue(any("development history" in w for w in self.warnings(LAB, phrase)))


class DraftTest(ExampleCase):
    def test_each_example_draft_has_the_figures_of_its_question_and_passes_the_check(self):
        expected = {
            LAB: ["p99 was 4.12 ms for put, 2.63 ms for get and 3.31 ms for mixed: every phase met the SLO",
                  "3 flushes (n0, n1, n2, around second 14.5) and 3 compactions (n0, n1, n2, around second 15.5) ran",
                  "GC: 4 pauses (n0 1, n1 1, n2 2), 5.9-15.4 ms on average per node", "Worst second: second 3, p99 22.7 ms",
                  "the cpu profiler attached at second 3.0 (n0, n1, n2)",
                  "The search sustained 2 250/s of get within the SLO (p99 9.02 ms at 2 250/s"],
            SATURATION: ["The search sustained 2 250/s of get within the SLO",
                         "p99 5.15 ms at 1 000/s, 7.10 ms at 1 500/s, 8.66 ms at 2 250/s and 12.1 ms at 3 375/s"],
            FAULTS: ["**cutoff of n2**", "2 340 requests failed",
                     "p99 per second above the SLO in 2 of its 14 full seconds",
                     "p99 per second above the SLO in 14 of its 14 full seconds", "the cluster healed within 12 s",
                     "GC: 17 pauses (n0 9, n1 8; no counters for n2)"],
        }
        for name, parts in expected.items():
            with self.subTest(name):
                d = self.root / name
                text = drafts.draft(runs.load_run(d), d)
                for part in parts:
                    self.assertIn(part, text)
                self.assertEqual([], verify.conclusion_warnings(text, d))

    def test_a_fault_draft_says_how_many_acknowledged_writes_were_lost(self):
        d = self.root / FAULTS
        doc = json.loads((d / "run.json").read_text())
        doc["phases"][-1]["ledger"] = {
            "acknowledged_writes": 37161, "acknowledged_deletes": 0, "checked": True, "why_not_checked": None,
            "keys_checked": 30210, "lost": 0, "lost_examples": [], "reads_checked": 36946, "stale_reads": 0,
        }
        (d / "run.json").write_text(json.dumps(doc))
        text = drafts.draft(runs.load_run(d), d)
        self.assertIn("Acknowledged writes lost in faults: 0 of 37 161 (read back at their replicas); stale reads: 0 of 36 946.", text)
        self.assertEqual([], verify.conclusion_warnings(text, d))

    def test_a_soak_draft_has_its_rate_the_long_phase_and_the_verdicts_drift_rows(self):
        d = self.root / LAB
        doc = json.loads((d / "run.json").read_text())
        doc |= {"kind": "soak", "soak": {"phase": "mixed", "rate": 500, "highest_rate": 714, "share": 0.7, "from": "search"}}
        (d / "run.json").write_text(json.dumps(doc))
        row = {"check": "RSS of n0", "observed": "+12 MiB (+3.1 %)", "target": "≤ +77 MiB", "status": "pass", "gate": "performance"}
        (d / "verdict.json").write_text(json.dumps({"kind": "soak", "rows": [row]}))
        text = drafts.draft(runs.load_run(d), d)
        self.assertIn("the mixed load at 500/s, 70 % of 714/s, the highest rate sustained within the SLO", text)
        self.assertIn("- RSS of n0: +12 MiB (+3.1 %) (target ≤ +77 MiB), pass.", text)
        self.assertIn("**The soak, second by second.**\n\n- **mixed** at 500/s", text)
        self.assertNotIn("- **put**", text)
        self.assertEqual([], verify.conclusion_warnings(text, d))

    def test_a_kind_without_its_own_drafter_gets_the_phases_draft(self):
        d = self.root / LAB
        run = runs.load_run(d) | {"kind": "something new"}
        self.assertIn("**Phase by phase.**", drafts.draft(run, d))


class NumbersTest(unittest.TestCase):
    def found(self, text: str, values: numbers.Values) -> bool:
        return numbers.Index(values).has(numbers.written(text)[0])

    def test_a_writer_rounds_and_changes_units(self):
        for text, value, kind in (
            ("4.03 ms", 4.0312, "ms"), ("2 250/s", 2250.2, "count"), ("10.0 %", 0.0997, "share"), ("1 KiB", 1024, "bytes"),
            ("15 s", 15000, "ms"), ("3 900 writes/s", 3857, "count"), ("about 25 ms", 22.655, "ms"), ("1.70×", 1.7018, "count"),
            ("100 MB", 102_400_000, "bytes"), ("10 million keys", 10_000_000, "count"), ("180 µs", 0.00018, "s"),
            ("3 min 56 s", 236, "s"),
        ):
            with self.subTest(text):
                self.assertTrue(self.found(text, [(value, kind)]))
        for text, value, kind in (
            ("4.1 ms", 4.0312, "ms"), ("3.3 ms", 4.03, "ms"), ("4 s", 4000, "count"), ("4 min 19 s", 236, "s"),
            ("2 240/s", 2250, "count"), ("9.97 %", 0.0997, "count"),
        ):
            with self.subTest(text):
                self.assertFalse(self.found(text, [(value, kind)]))

    def test_ranges_lists_bounds_and_names(self):
        ws = numbers.written(numbers.prose("5-8 ms; 2.5, 5.3 and 8.8 bytes; under 1.5 ms; k6 n0 `-Xmx512m` 100k [x](../2026/a.md)"))
        self.assertEqual([(5, "ms"), (8, "ms"), (2.5, "B"), (5.3, "B"), (8.8, "B"), (1.5, "ms")], [(w.value, w.unit) for w in ws])
        self.assertTrue(ws[-1].bound)


class ConclusionFilesTest(unittest.TestCase):
    def test_the_report_shows_the_draft_until_a_person_writes_conclusion_md_which_no_render_overwrites(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-lab", 1.0)
            md = report.generate(d)[0].read_text()
            draft = (d / files.DRAFT).read_text()
            # The synthetic run recorded no time series: the draft does not say that nothing ran.
            self.assertIn("- **put** at 1 000/s: 995/s achieved, p99 10.2 ms (SLO 10 ms missed)", draft)
            self.assertNotIn("flush", draft)
            conclusion = md.split("## Conclusion")[1].split("\n## ")[0]
            self.assertIn("*A draft, written by the lab from this run's data and not edited yet.", conclusion)
            self.assertIn(draft.splitlines()[0], conclusion)
            (d / files.WRITTEN).write_text(draft + "\n")  # copied, not edited: still a draft
            self.assertEqual((draft.strip(), True), files.shown(d))
            (d / files.WRITTEN).write_text("PUT met the SLO.\n")
            md = report.generate(d)[0].read_text()
            self.assertIn("## Conclusion\n\nPUT met the SLO.\n", md)
            self.assertNotIn("A draft, written by the lab", md)
            self.assertEqual("PUT met the SLO.\n", (d / files.WRITTEN).read_text())
            self.assertEqual(draft, conclusions.write_draft(d, runs.load_run(d)).read_text())

    @mock.patch.object(check, "problems", lambda run_dir: [])  # the synthetic run's report lacks real flame graphs
    def test_lab_check_fails_on_a_conclusions_warning_only_when_strict(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-lab", 1.0)
            report.generate(d)
            self.assertEqual([], verify.warnings(d))
            self.assertEqual(0, check.main(d, strict=True))
            (d / files.WRITTEN).write_text("p99 was 99.9 ms for put, before this change.\n")
            report.generate(d)
            found = verify.warnings(d)
            self.assertEqual(3, len(found), found)
            self.assertTrue(all(w.startswith("conclusion.md: ") for w in found))
            self.assertEqual(0, check.main(d))
            self.assertEqual(1, check.main(d, strict=True))


if __name__ == "__main__":
    unittest.main()
