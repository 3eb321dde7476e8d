"""Self-tests of the report's first screen, its figures and its files, on synthetic runs (no server,
no load): the title and verdict box, saturation searches of both kinds, time series and faults,
spectra that end with their requests, ratios and what differs between runs, differential flame
graphs and the dominant monitor, the HTML rendered from the Markdown, and the check of all that.
Run: make lab-selftest."""

from __future__ import annotations

import json
import re
import tempfile
import unittest
from pathlib import Path

from lab import check, checkverdict, flamegraph, report
from lab.report import flamediff, plots, runs, seriesplot
from lab.tests import test_lab
from lab.tests.test_lab import SEARCH, phase, write_run

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# A lock profile in miniature: every stack ends in the class of the lock waited for.
LOCK_PAGE = """<script>
const cpool = [
'all',
' a/B.run',
'$lock',
' java.lang.Object',
' java.util.concurrent.locks.ReentrantLock$NonfairSync',
];
unpack(cpool);
f(0,0,0,10)
u(8,10)
u(16,10)
u(24,7)
n(32,3)
</script>"""


def edit(run_dir: Path, change) -> dict:
    """Changes a synthetic run's run.json in place (change(doc) edits the dict) and returns it."""
    doc = json.loads((run_dir / "run.json").read_text())
    change(doc)
    (run_dir / "run.json").write_text(json.dumps(doc))
    return doc


def three_nodes(doc: dict) -> None:
    doc["config"] |= {"rate": 500, "replicas": "", "tool": "k6"}
    doc["nodes"] = [{"name": f"n{i}", "pid": 123 + i, "target": ""} for i in range(3)]


def step(scenario: str, rate: int, scale: float) -> dict:
    p = phase(scenario, scale, rate, False)
    p |= {"label": f"{scenario}@{rate}", "dir": f"phases/0{rate // 1000}-{scenario}-{rate}", "saturation_step": True}
    return p


class ReportCase(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)

    def generate(self, run_dir: Path, compare: Path | None = None) -> tuple[str, str]:
        md_path, html_path = report.generate(run_dir, compare)
        return md_path.read_text(), html_path.read_text()


class HeadlineTest(ReportCase):
    @classmethod
    def setUpClass(cls):
        """One plain run of three nodes at 500/s, for the tests that only read its report."""
        tmp = tempfile.TemporaryDirectory()
        cls.addClassCleanup(tmp.cleanup)
        d = cls.dir = write_run(Path(tmp.name), "20260101-000000-lab", 0.4)
        cls.doc = edit(d, three_nodes)
        md_path, html_path = report.generate(d)
        cls.md, cls.page = md_path.read_text(), html_path.read_text()

    def test_the_title_names_the_kind_and_configuration_and_the_verdict_box_comes_right_under_it(self):
        md, page = self.md, self.page
        title = "kvlab fixed-rate phases: 3 nodes, replicas 2/3, k6 at 500/s"
        self.assertTrue(md.startswith(f"# {title}\n\n<div class=\"verdict\" markdown=\"1\">\n"), md[:80])
        box = md[: md.index("</div>")]
        self.assertLess(md.index("</div>"), md.index("Started with:"))
        self.assertIn("**Passed.** Both phases met the SLO (p99 4.09–8.18 ms).", box)
        self.assertIn(
            "| put | 995 of 1 000/s (99.5%), p99 4.09 ms, 0.10% failed | ≥ 98% of 1 000/s, p99 ≤ 10 ms, ≤ 1% failed "
            "| pass | performance |",
            box,
        )
        self.assertIn("| get | 1 990 of 2 000/s (99.5%), p99 8.18 ms, 0.10% failed |", box)
        self.assertIn("| get | `http_req_duration p(99)<10` | 8.18 ms | pass |", box)
        self.assertIn('<div class="verdict">', page)
        self.assertIn(f"<title>{title}</title>", page)
        verdict = json.loads((self.dir / "verdict.json").read_text())
        self.assertEqual((title, "lab", "local", True), (verdict["title"], verdict["kind"], verdict["executor"], verdict["passed"]))
        self.assertEqual([], checkverdict.problems(self.dir, self.doc, md, page))

    def test_the_check_finds_a_wrong_title_a_missing_box_a_row_not_shown_and_a_stale_verdict(self):
        d, doc, md, page = self.dir, self.doc, self.md, self.page
        wrong = md.replace("3 nodes", "2 nodes", 1)
        self.assertEqual(
            ["the title says 2 nodes, the run had 3", "report.md's title is not verdict.json's"],
            checkverdict.problems(d, doc, wrong, page),
        )
        self.assertIn(
            "report.md's title is not one of a lab run that names its configuration: # kvlab: 3 nodes",
            checkverdict.problems(d, doc, "# kvlab: 3 nodes\n" + md.split("\n", 1)[1], page)[0],
        )
        no_box = re.sub(r'<div class="verdict".*?</div>\n', "", md, flags=re.S)
        self.assertEqual(
            ["report.md does not open with a verdict box right under its title"], checkverdict.problems(d, doc, no_box, page)
        )
        self.assertEqual(
            ["the verdict box does not show verdict.json's row 'get' as it is"],
            checkverdict.problems(d, doc, md.replace("| get | 1 990", "| got | 1 990"), page),
        )
        shown = md.replace("**Passed.**", "**Failed.**")
        self.assertEqual(
            ["the verdict box does not give verdict.json's answer and whether it passed"],
            checkverdict.problems(d, doc, shown, page),
        )
        slower = json.loads(json.dumps(doc))
        slower["phases"][1]["result"]["latency"]["all"]["percentiles"]["p99"] = 50.0
        self.assertIn("verdict.json does not agree with the run's data: write the report again", checkverdict.problems(d, slower, md, page))
        other = self.root / "copy"
        other.mkdir()
        self.assertIn("the run has no verdict.json beside its report", checkverdict.problems(other, doc, md, page))

    def test_a_missed_slo_stands_out_and_given_replicas_are_named(self):
        d = write_run(self.root, "20260101-000000-lab", 2.0)

        def calm(doc):
            three_nodes(doc)
            doc["config"]["replicas"] = "3/3"
            doc["phases"][0]["cpu"]["jvm_pauses"]["123"] |= {"safepoints": 0, "stopped_s": 0.0, "stopped_share": 0.0}

        edit(d, calm)
        md, _ = self.generate(d)
        self.assertTrue(md.startswith("# kvlab fixed-rate phases: 3 nodes, replicas 3/3, k6 at 500/s\n"))
        box = md[: md.index("</div>")]
        self.assertIn("**Failed.** 2 of 2 phases missed the SLO: put (p99 20.5 ms) and get (p99 40.9 ms).", box)
        self.assertIn("| put | 995 of 1 000/s (99.5%), p99 20.5 ms, 0.10% failed | ≥ 98% of 1 000/s, p99 ≤ 10 ms, ≤ 1% failed | **fail** | performance |", box)
        self.assertIn("the load generator 0.30; no node's JVM stopped for a safepoint.\n", md)

    def test_wrk_figures_are_marked_from_the_send_and_tool_remarks_are_notes_not_findings(self):
        d = write_run(self.root, "20260101-000000-wrk", 0.4)

        def wrk(doc):
            three_nodes(doc)
            doc["phases"][1]["result"] |= {
                "tool": "wrk",
                "model": "paced closed loop (Debian's wrk + Lua delay(); latency from the send, uncorrected)",
            }

        edit(d, wrk)
        md, _ = self.generate(d)
        self.assertTrue(md.startswith("# kvlab fixed-rate phases: 3 nodes, replicas 2/3, k6 and wrk at 500/s\n"))
        self.assertIn("| get | 1 990 of 2 000/s (99.5%), p99 8.18 ms (from the send), 0.10% failed |", md)
        self.assertIn('A p99 marked "from the send" is Debian\'s wrk\'s', md[: md.index("</div>")])
        findings = md.split("## Findings\n\n")[1].split("\n\n")[0].splitlines()
        self.assertTrue(findings[0].startswith("- put: achieved"), findings[0])
        self.assertNotIn("wrk2", "\n".join(findings))
        self.assertIn("p99 8.18 ms (SLO 10 ms met; timed from the send by Debian's wrk, so a stall's queueing is not in it)", findings[1])
        notes = md.split("What the load tools measure:")[1].split("## Commands")[0]
        self.assertIn("wrk: Debian's wrk, not wrk2 (wrk2 is not installed here)", notes)
        self.assertIn("Latency from the send (Debian's wrk)", md.split("### get")[1])

    def test_a_fixed_rate_run_with_a_short_search_heads_with_the_highest_sustained_rate(self):
        d = write_run(self.root, "20260101-000000-lab", 0.4)

        def search(doc):
            three_nodes(doc)
            doc["phases"] += [step("get", 1000, 0.3), step("get", 1500, 0.6), step("get", 2250, 1.2)]
            doc["saturation"] = json.loads(json.dumps(SEARCH))

        doc = edit(d, search)
        md, page = self.generate(d)
        box = md[: md.index("</div>")]
        self.assertIn(
            "| highest rate sustained within the SLO (the short search) | 1 500/s of get (p99 6.00 ms, 1 499/s achieved, "
            "0.00% failed) | p99 ≤ 10 ms, ≥ 98% of the rate, ≤ 1% failed | – | – |",
            box,
        )
        self.assertIn(
            "| the limit, bracketed | between 1 500/s (held) and 2 250/s (p99 12 ms > SLO 10 ms): 50% apart | within 10% "
            "| fail, not gated | – |",
            box,
        )
        self.assertIn("the short search sustained 1 500/s of get.", box)
        self.assertNotIn("| get@1000 |", box, "search steps are not fixed-rate phases")
        # The curve's points carry each step's p50 and p99.9 from its own phase.
        self.assertIn("| 1 500 | 1 499 | 0.623 | 6.14 | 6.55 | 0.000% | yes |", md)
        self.assertTrue((d / "plots" / "saturation.png").read_bytes().startswith(b"\x89PNG"))
        self.assertIn("saturation (get): the highest rate that met every condition was 1 500/s", md)
        self.assertEqual([], checkverdict.problems(d, doc, md, page) + check.figure_problems(d, doc, md))
        (d / "plots" / "saturation.png").unlink()
        self.assertEqual(
            ["a saturation search ran but the report has no saturation curve"], check.figure_problems(d, doc, md)
        )

    def test_a_saturation_run_is_titled_by_its_search(self):
        d = write_run(self.root, "20260101-000000-sat", 0.4, saturation=True)

        def steps(doc):
            three_nodes(doc)
            doc["phases"] = [step("get", 1000, 0.3), step("get", 1500, 0.6), step("get", 2250, 1.2)]
            for p in doc["phases"]:
                del p["saturation_step"]  # a search run's steps are its measured phases

        doc = edit(d, steps)
        md, page = self.generate(d)
        self.assertTrue(md.startswith("# kvlab saturation search: 3 nodes, replicas 2/3, k6, get from 1 000/s up\n"))
        box = md.split("</div>")[0]
        self.assertIn("| highest rate sustained within the SLO | 1 500/s of get (p99 6.00 ms, 1 499/s achieved, 0.00% failed) |", box)
        self.assertIn("**Passed.** The cluster sustained 1 500/s of get within the SLO (p99 6.00 ms ≤ 10 ms)", box)
        self.assertNotIn("| get@1000 |", box)
        self.assertEqual([], checkverdict.problems(d, doc, md, page))


class TimeSeriesTest(ReportCase):
    FAULT = {
        "kind": "pause", "node": "n2", "at_s": 10.0, "for_s": 10.0, "began_at_s": 10.2, "ended_at_s": 20.2,
        "error": "", "what": "node n2 (pid 125) paused (SIGSTOP, then SIGCONT)",
        "recovery": {
            "errors_during": 36, "p99_before_ms": 3.2, "p99_during_ms": 950.0, "p99_after_ms": 3.4,
            "rate_recovered_s": 3.0, "p99_recovered_s": None, "hints_replayed": 412, "records_repaired": 0,
        },
    }

    def run_with_series(self, series: dict | None, faults: list | None = None) -> tuple[Path, dict]:
        d = write_run(self.root, "20260101-000000-faults", 0.4)
        if series is not None:
            (d / "phases" / "01-get").mkdir(parents=True)
            (d / "phases" / "01-get" / "timeseries.json").write_text(json.dumps(series))

        def wire(doc):
            three_nodes(doc)
            doc["phases"][1]["timeseries"] = "phases/01-get/timeseries.json"
            doc["phases"][1]["hgrm"] = "phases/01-get/latency.hgrm"
            if faults:
                doc["phases"][1]["faults"] = faults

        return d, edit(d, wire)

    def test_every_panel_of_a_phase_with_faults_and_a_sentence_per_fault(self):
        series = json.loads((FIXTURES / "timeseries.json").read_text())
        self.assertEqual(["rate", "latency", "errors", "cpu", "gc", "healing", "events"], seriesplot.panels(series))
        unhappened = {"kind": "pause", "node": "n1", "at_s": 28.0, "for_s": 5.0, "began_at_s": None,
                      "ended_at_s": None, "error": "the phase ended first", "what": "node n1 paused"}
        d, doc = self.run_with_series(series, [self.FAULT, unhappened])
        (d / "phases" / "01-get" / "latency.hgrm").write_text("       Value     Percentile TotalCount 1/(1-Percentile)\n")
        md, page = self.generate(d)
        get = md.split("### get")[1]
        self.assertIn("HdrHistogram's percentile-distribution format (ms)", get)
        self.assertIn("[phases/01-get/latency.hgrm](phases/01-get/latency.hgrm)", get)
        self.assertIn('<a href="phases/01-get/latency.hgrm">', page)
        self.assertIn(
            "Second by second, faults shaded, the hints the nodes kept for the writes a peer missed and their replay, "
            "the nodes' RocksDB flushes and compactions marked",
            get,
        )
        self.assertIn("![get time series](plots/timeseries-01-get.png)", get)
        self.assertIn(
            "| node n2 (pid 125) paused (SIGSTOP, then SIGCONT) | second 10.0 for 10.0 s | 10.2–20.2 s | 36 "
            "| 3.20 / 950 / 3.40 | 3.0 s after | not within the phase | 412 | 0 |",
            get,
        )
        self.assertIn("| node n1 paused | second 28.0 for 5.0 s | did not happen: the phase ended first |", get)
        self.assertIn(
            "- get: node n2 (pid 125) paused (SIGSTOP, then SIGCONT) from second 10.2 to 20.2 of the load: 36 requests "
            "failed meanwhile; p99 went from 3.20 ms before to 950 ms during and 3.40 ms after; the rate was back 3.0 s "
            "after it ended and p99 never recovered within the phase; 412 hints replayed, 0 records repaired.",
            md,
        )
        self.assertIn("- get: node n1 paused did not happen (the phase ended first).", md)
        box = md.split("</div>")[0]
        self.assertIn(
            "| get: n2 paused (second 10–20) | 36 requests failed; rate back 3.0 s after, p99 not back within the phase; "
            "412 hints replayed, 0 records repaired | rate and p99 back within the phase | **fail** | performance |",
            box,
        )
        self.assertIn("| get: n1 paused (planned at second 28) | did not happen: the phase ended first |", box)
        self.assertIn("A phase with faults is not held to the SLO", box)
        self.assertTrue((d / "plots" / "timeseries-01-get.png").read_bytes().startswith(b"\x89PNG"))
        self.assertEqual([], check.figure_problems(d, doc, md))
        self.assertEqual(
            ["phase get has a time series but no time-series figure"],
            check.figure_problems(d, doc, md.replace("(plots/timeseries-01-get.png)", "(plots/elsewhere.png)")),
        )
        # A warm-up is drawn no figure, and the check asks for none.
        warm = {**doc, "phases": [{**phase, "warmup": True} for phase in doc["phases"]]}
        self.assertEqual([], check.figure_problems(d, warm, md.replace("(plots/timeseries-01-get.png)", "(plots/elsewhere.png)")))

    def test_a_tool_without_latency_per_second_draws_rate_and_errors_and_says_why(self):
        series = json.loads((FIXTURES / "timeseries.json").read_text())
        series["load"] |= {"source": "wrk", "latency": False}
        series["nodes"], series["events"] = {}, []
        self.assertEqual(["rate", "errors"], seriesplot.panels(series))
        d, _ = self.run_with_series(series)
        md, _ = self.generate(d)
        self.assertIn("wrk gives no latency per second (only one distribution at its end), so the figure shows", md)
        self.assertTrue((d / "plots" / "timeseries-01-get.png").is_file())

    def test_a_wrk_phase_shows_the_latency_the_nodes_measured_and_says_so(self):
        series = json.loads((FIXTURES / "timeseries.json").read_text())
        series["load"] |= {"source": "wrk", "latency": False}
        server = [{"t": s["t"] + 0.01, "requests": s["requests"], "p50_ms": 0.4, "p99_ms": 2.0} for s in series["load"]["seconds"]]
        series["server"] = {"source": "kvlab_requests_seconds", "note": "measured by the nodes (no network)", "seconds": server}
        self.assertIn("latency", seriesplot.panels(series))
        d, _ = self.run_with_series(series)
        md, _ = self.generate(d)
        self.assertIn("wrk gives no latency per second (only one distribution at its end), so the latency over time is the nodes' own.", md)
        self.assertIn("Latency at the nodes (dashed): measured by the nodes (no network).", md)
        (d / "phases" / "01-get" / "timeseries.json").write_text(json.dumps(series | {"load": None}))
        md, _ = self.generate(d)
        self.assertIn("a wrk pod sends none), so the rate and latency are the nodes' own.", md)

    def test_a_time_series_of_the_nodes_only_is_drawn_and_says_why(self):
        # A phase whose load generator sent no per-request samples (a wrk pod in Kubernetes): "load" is null.
        series = json.loads((FIXTURES / "timeseries.json").read_text()) | {"load": None}
        self.assertNotIn("rate", seriesplot.panels(series))
        d, _ = self.run_with_series(series)
        md, _ = self.generate(d)
        self.assertIn("The load tool's figures per second were not collected", md)
        self.assertTrue((d / "plots" / "timeseries-01-get.png").is_file())

    def test_a_phase_without_its_time_series_file_is_shown_without_it(self):
        # A fault the run measured no recovery of (the outage phase's) is listed with its schedule only.
        d, doc = self.run_with_series(None, [{k: v for k, v in self.FAULT.items() if k != "recovery"}])
        md, _ = self.generate(d)
        self.assertIn(
            "| fault | planned | held |\n| --- | --- | --- |\n"
            "| node n2 (pid 125) paused (SIGSTOP, then SIGCONT) | second 10.0 for 10.0 s | 10.2–20.2 s |\n",
            md,
        )
        self.assertNotIn("time series", md)
        self.assertNotIn("latency.hgrm", md, "no link to an .hgrm file that is not there")
        self.assertEqual([], check.figure_problems(d, doc, md))

    def test_the_findings_say_why_a_fault_was_left_out_or_has_no_recovery_figures(self):
        fault = {k: v for k, v in self.FAULT.items() if k != "recovery"} | {"recovery_why": "the phase has no time series"}
        d, _ = self.run_with_series(None, [fault])
        edit(d, lambda doc: doc["config"].update(faults_left_out=[{"fault": "cutoff@120+15", "why": "cutting off needs root."}]))
        md, _ = self.generate(d)
        findings = md.split("## Findings")[1].split("## Conclusion")[0]
        self.assertIn("of the load; no recovery figures: the phase has no time series.", findings)
        self.assertIn("- Fault cutoff@120+15 was left out of the schedule: cutting off needs root.", findings)


class PlotsTest(unittest.TestCase):
    def test_a_spectrum_ends_where_its_requests_do(self):
        spectrum = [[1 - 10 ** -k, k + 1.0] for k in range(0, 7)] + [[1.0, 9.0]]
        xs, ys = plots.spectrum_xy(spectrum, 15_000)
        self.assertAlmostEqual(xs[-2], 10_000)  # 99.99 %: 99.999 % lies beyond 15 000 requests
        self.assertEqual(xs[-1], 15_000)  # where the maximum is: the highest of 15 000
        self.assertEqual(ys, [1.0, 2.0, 3.0, 4.0, 5.0, 9.0])
        self.assertEqual(len(plots.spectrum_xy(spectrum, None)[0]), 7)  # no end: every point but p = 1
        self.assertEqual(plots.percentile_label(3001), "99.97%")
        self.assertEqual(plots.percentile_label(15_000), "99.993%")

    def test_one_latency_range_holds_every_spectrum_and_the_slo(self):
        low, high = plots.latency_range([[0.5, 2.0], [1.0, 300.0]], 10)
        self.assertLess(low, 0.5)
        self.assertGreater(high, 300)
        self.assertGreater(plots.latency_range([[0.5, 2.0]], 10)[1], 10)


class ComparisonTest(ReportCase):
    def test_ratios_and_what_differs_between_the_runs(self):
        prev = write_run(self.root, "20260101-000000-lab", 1.0)
        this = write_run(self.root, "20260102-000000-lab", 1.25)
        edit(prev, lambda doc: doc["config"].update(rate=500))
        edit(this, lambda doc: doc["config"].update(rate=1000))
        env = json.loads((this / "env.json").read_text())
        env |= {"git": {"commit": "0123456789abcdef", "dirty": True}, "load_average": "1.50"}
        (this / "env.json").write_text(json.dumps(env))
        md, _ = self.generate(this)
        self.assertIn(
            "What differs: commit `abcdef012345` → `0123456789ab`; knobs: rate 500 → 1000; "
            "same machine (2 cores, test cpu), load average at start 0 → 1.50; same executor (local).",
            md,
        )
        self.assertIn("| put | all | 995 / 995 (×1.00) | 1.30 / 1.04 (×1.25) | 12.8 / 10.2 (×1.25) |", md)
        self.assertNotIn("%)", md.split("## Comparison")[1])

    def test_differences_name_nodes_and_executor(self):
        a = {"config": {"rate": 500}, "nodes": [{}], "env": {"cores": 2, "cpu_model": "x"}}
        b = {"config": {"rate": 500}, "nodes": [{}, {}, {}], "executor": "k8s", "env": {"cores": 4, "cpu_model": "x"}}
        parts = runs.differences(b, a)
        self.assertEqual("knobs: nodes 1 → 3", parts[1])
        self.assertTrue(parts[2].startswith("machine: cores 2 → 4, load average"))
        self.assertEqual("executor local → k8s", parts[3])


class FlameGraphReportTest(ReportCase):
    def with_graphs(self, name: str, cpu: str, lock: str) -> Path:
        d = write_run(self.root, name, 1.0)

        def graphs(doc):
            doc["phases"][0]["profiles"].append(doc["phases"][0]["profiles"][0] | {"event": "lock", "file": "n0-lock.html"})

        edit(d, graphs)
        profiles = d / "phases" / "01-put" / "profiles"
        profiles.mkdir(parents=True)
        (profiles / "n0-cpu.html").write_text(cpu)
        (profiles / "n0-lock.html").write_text(lock)
        return d

    def test_samples_the_dominant_monitor_and_a_differential_graph(self):
        # The previous run spent all its time in B.run itself; this one 7 of 10 samples in B.c.
        before = test_lab.FlameGraphTest.PAGE.replace("u(8,8)\nu(16,5)\nf(16,1,8,2)", "u(8,10)")
        self.with_graphs("20260101-000000-lab", before, LOCK_PAGE)
        d = self.with_graphs("20260102-000000-lab", test_lab.FlameGraphTest.PAGE, LOCK_PAGE)
        md, _ = self.generate(d)
        put = md.split("### put")[1].split("### get")[0]
        self.assertIn("- n0 cpu (4 s from second 1, 10 samples, ±16 points): [phases/01-put/profiles/n0-cpu.html]", put)
        self.assertIn("[differential against the previous run](phases/01-put/profiles/n0-cpu-diff.html)", put)
        self.assertIn(
            "Lock profiles: the dominant monitor is `java.lang.Object`, taken in `B.lock`: 70% of 10 lock samples over 1 graph.",
            put,
        )
        self.assertIn("Lock profiles: the dominant monitor is `java.lang.Object` taken in `B.lock` in every profiled phase", md)
        self.assertIn("Flame graphs: 2 of 2 hold fewer than 1 000 samples", md)
        # B.run held every sample before and 8 of 10 now (blue); the two stacks of B.c are new (red).
        rows = flamediff.compare(flamegraph.frames(test_lab.FlameGraphTest.PAGE), flamegraph.frames(before))
        self.assertEqual([0.0, -0.2, 0.5, 0.2], [round(r["change"], 6) for r in rows])
        diff = (d / "phases" / "01-put" / "profiles" / "n0-cpu-diff.html").read_text()
        self.assertIn("<html", diff[:200])
        # Full colour at the largest change (0.5): B.c under B.run full red, B.run 40 % blue.
        self.assertIn('fill="rgb(214,39,40)"/><text x="2.0" y="12.0">a/B.c</text>', diff)
        self.assertIn('fill="rgb(165,201,225)"/><text x="2.0" y="28.0">a/B.run</text>', diff)
        self.assertIn('fill="rgb(255,255,255)"/><text x="2.0" y="44.0">all</text>', diff)
        self.assertIn("this run: 80.00 % (8 of 10 samples)\nprevious run: 100.00 %\nchange: -20.00 points (×0.80)", diff)

    def test_no_differential_graph_without_the_previous_runs_graph(self):
        write_run(self.root, "20260101-000000-lab", 1.0)
        d = self.with_graphs("20260102-000000-lab", test_lab.FlameGraphTest.PAGE, LOCK_PAGE)
        md, _ = self.generate(d)
        self.assertNotIn("differential against", md.split("## Phases")[1])
        self.assertFalse((d / "phases" / "01-put" / "profiles" / "n0-cpu-diff.html").exists())


class RenderTest(ReportCase):
    def test_the_html_is_the_markdown_rendered_self_contained(self):
        write_run(self.root, "20260101-000000-lab", 1.0)
        d = write_run(self.root, "20260102-000000-lab", 1.0)
        (d / "conclusion.md").write_text(
            "**What was run.** Three nodes, `make lab`, see [the notes](notes.md).\n\n- one\n- two\n"
        )
        md, page = self.generate(d)
        self.assertIn("<p><strong>What was run.</strong> Three nodes, <code>make lab</code>, see <a href=\"notes.md\">the notes</a>.</p>", page)
        self.assertIn("<li>one</li>", page)
        # One structure: every heading of the Markdown is a heading of the page, in order.
        self.assertEqual(re.findall(r"^##+ (.+)$", md, re.M), re.findall(r"<h[23] id=\"[^\"]+\">(.+?)</h[23]>", page))
        self.assertNotIn('src="plots/', page)
        self.assertEqual(md.count("](plots/"), page.count('src="data:image/png;base64,'))
        self.assertIn('href="../20260101-000000-lab/report.html"', page)
        self.assertIn('href="phases/01-put/profiles/n0-cpu.html"', page)
        self.assertEqual([], [p for p in check.problems(d) if "report.html" in p])

    def test_a_number_with_thousands_never_breaks_across_lines_on_the_page(self):
        d = write_run(self.root, "20260101-000000-lab", 1.0)
        (d / "conclusion.md").write_text("It held 12 500/s; `make lab RATE=1 000` is code.\n")
        md, page = self.generate(d)
        self.assertIn("12 500/s", md)
        self.assertIn("It held 12\u00a0500/s", page)
        self.assertIn("<code>make lab RATE=1 000</code>", page)

    def test_the_check_finds_markdown_left_unrendered(self):
        d = write_run(self.root, "20260101-000000-lab", 1.0)
        self.generate(d)
        html = d / "report.html"
        html.write_text(html.read_text().replace('<h2 id="findings">Findings</h2>', "<p>**Findings**</p>"))
        self.assertIn("report.html shows Markdown unrendered (a table or **bold** as text)", check.problems(d))


class RealGraphTest(unittest.TestCase):
    """The graphs of the docs' example runs: frames come depth first, so a stack's callers are the
    frames before it, as flamegraph.stacks reads them."""

    def test_each_frame_lies_within_its_caller(self):
        graphs = sorted(Path(__file__).resolve().parents[3].glob("docs/reports/*/phases/*/profiles/*-cpu.html"))[:4]
        if not graphs:
            self.skipTest("no example flame graph in docs/reports")
        for graph in graphs:
            frames = flamegraph.frames(graph.read_text())
            stack = []
            for f in frames:
                del stack[f.level :]
                if stack:
                    caller = stack[-1]
                    self.assertTrue(caller.left <= f.left and f.left + f.width <= caller.left + caller.width, (graph, f))
                stack.append(f)
            self.assertEqual(sum(w for p, w in flamegraph.stacks(frames).items() if len(p) == 2), flamegraph.samples(frames))


if __name__ == "__main__":
    unittest.main()
