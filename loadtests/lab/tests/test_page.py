"""Self-tests of how a report reads from the top down, on synthetic runs: a table of contents whose
links are the headings' GitHub anchors; the environment, the commands and the warm-ups folded; lists
rendered as GitHub renders them; tables with nothing in them and lock graphs of one monitor replaced
by a line; the comparison and the differential graphs only against an earlier report of the same
kind, with a phase in common, published beside this one; a node killed and started again during a
phase in the CPU table. Run: make lab-selftest."""

from __future__ import annotations

import json
import re
import tempfile
import unittest
from pathlib import Path

from lab import check, report
from lab.report import render, runs, views
from lab.tests import test_lab
from lab.tests.test_lab import phase, write_run
from lab.tests.test_report import LOCK_PAGE, edit

# A lock profile of one monitor taken in one place: every sample in one stack.
ONE_LOCK_PAGE = LOCK_PAGE.replace("u(24,7)\nn(32,3)", "u(24,10)")


class PageCase(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)

    def generate(self, run_dir: Path, compare: Path | None = None) -> tuple[str, str]:
        md_path, html_path = report.generate(run_dir, compare)
        return md_path.read_text(), html_path.read_text()


class ContentsTest(PageCase):
    def test_anchors_are_githubs(self):
        self.assertEqual("comparison-with-the-previous-report", render.slug("Comparison with the previous report"))
        self.assertEqual("get10000-at-100k", render.slug("get@10000 at 100k"))
        self.assertEqual("warm-up-get-on-new-connections", render.slug("warm-up get on new connections"))
        anchor = render.Anchors()
        self.assertEqual(["put", "get", "put-1", "put-2"], [anchor(t) for t in ("put", "get", "put", "put")])

    def test_the_contents_follow_the_verdict_and_lead_to_every_section(self):
        d = write_run(self.root, "20260101-000000-lab", 1.0)
        md, page = self.generate(d)
        verdict_end, contents, findings = md.index("</div>"), md.index('<div class="contents"'), md.index("## Findings")
        self.assertLess(verdict_end, contents)
        self.assertLess(contents, findings)
        box = md[contents:findings]
        self.assertIn("- [Phases](#phases): [put](#put) · [get](#get)\n", box)
        sections = re.findall(r"^## (.+)$", md, re.M)
        self.assertEqual(sections, re.findall(r"^- \[([^]]+)\]", box, re.M))
        for anchor in re.findall(r"\]\(#([^)]+)\)", box):
            self.assertIn(f' id="{anchor}"', page)
        self.assertEqual([], check.contents_problems(md, page))
        self.assertEqual(
            ["the table of contents links #phases, which the page does not have"],
            check.contents_problems(md, page.replace(' id="phases"', "")),
        )
        self.assertEqual(["report.md has no table of contents"], check.contents_problems(md.replace("contents", "c"), page))


def with_warmup(doc: dict) -> None:
    warm = phase("get", 1.0, 1000, False) | {"label": "warm-up get", "dir": "phases/00-warm-up-get", "warmup": True}
    doc["phases"].insert(0, warm)


class FoldingTest(PageCase):
    def test_environment_commands_and_warmups_are_folded_with_a_line_that_says_what_is_inside(self):
        d = write_run(self.root, "20260101-000000-lab", 1.0)
        edit(d, with_warmup)
        md, page = self.generate(d)
        env = md.split("## Environment\n")[1].split("\n## ")[0]
        self.assertTrue(env.startswith('\n<details markdown="1">\n<summary>2 cores, 24 GiB memory, Debian: '), env[:80])
        self.assertTrue(env.rstrip().endswith("</details>"))
        commands = md.split("## Commands\n")[1].split("\n## ")[0]
        self.assertIn("<summary>4 commands, exactly as run", commands)
        self.assertNotIn("### warm-up get", md)
        self.assertIn(
            '<details markdown="1">\n<summary>warm-up get: achieved 995/s of 1 000/s, p99 10.2 ms; a warm-up (JIT, caches), '
            "not measured</summary>",
            md,
        )
        self.assertNotIn("warm-up", md.split('<div class="contents"')[1].split("</div>")[0])
        self.assertIn("- 1 warm-up phase (JIT, caches), not measured: folded under Phases.\n", md)
        # The page folds them too, with the tables inside rendered.
        warmup = page.split("<summary>warm-up get:")[1].split("</details>")[0]
        self.assertIn("<table>", warmup)
        self.assertIn("<details>\n<summary>2 cores", page)
        self.assertIn("<pre><code>k6 run get.js", page.split("<summary>4 commands")[1])


class ListsTest(unittest.TestCase):
    def test_a_list_may_follow_a_line_of_text_as_on_github(self):
        fix = render.lists_as_github_reads_them
        self.assertEqual(["**Targets.**", "", "- one", "- two"], fix(["**Targets.**", "- one", "- two"]))
        self.assertEqual(["so:", "", "1. one"], fix(["so:", "1. one"]))
        # Kept: items of a list already begun, their continuation lines, code, and a number that is no list.
        for kept in (["- one", "  more", "- two"], ["```", "text", "- not an item", "```"], ["from 3", "2. and"]):
            self.assertEqual(kept, fix(kept))

    def test_the_page_renders_a_conclusions_list_as_a_list(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-lab", 1.0)
            (d / "conclusion.md").write_text("**The targets.**\n- GET within 2×;\n- fill above 20 000/s.\n")
            md_path, html_path = report.generate(d)
            page = html_path.read_text()
            self.assertIn("<li>GET within 2×;</li>", page)
            self.assertIn("**The targets.**\n- GET within 2×;", md_path.read_text(), "report.md as written")
            self.assertNotIn("report.html shows a list as text", " ".join(check.problems(d)))
            html_path.write_text(page.replace("<p><strong>The targets.</strong></p>", "<p>The targets.\n- GET.</p>"))
            self.assertIn('report.html shows a list as text: a paragraph with " - " items', check.problems(d))


class EmptyTablesTest(PageCase):
    def test_a_phase_without_a_safepoint_says_so_in_a_line(self):
        d = write_run(self.root, "20260101-000000-lab", 1.0)

        def still(doc):
            doc["phases"][0]["cpu"]["jvm_pauses"]["123"] |= {"safepoints": 0, "stopped_s": 0.0, "stopped_share": 0.0,
                                                             "gc_pauses": 0, "gc_s": 0.0}

        edit(d, still)
        md, _ = self.generate(d)
        put, get = md.split("### put")[1].split("### get")
        self.assertIn("\nNo node's JVM stopped for a safepoint in this phase.\n", put)
        self.assertNotIn("| node | safepoints |", put)
        self.assertIn("| node | safepoints |", get)
        self.assertNotIn("lacks the table of the nodes' JVM pauses", " ".join(check.problems(d)))

    def test_lock_graphs_of_one_monitor_are_named_in_a_line_not_listed(self):
        d = write_run(self.root, "20260101-000000-lab", 1.0)

        def locks(doc):
            base = doc["phases"][0]["profiles"][0]
            doc["phases"][0]["profiles"] += [
                base | {"node": node, "event": "lock", "file": f"{node}-lock.html"} for node in ("n0", "n1", "n2")
            ]

        edit(d, locks)
        profiles = d / "phases" / "01-put" / "profiles"
        profiles.mkdir(parents=True)
        (profiles / "n0-cpu.html").write_text(test_lab.FlameGraphTest.PAGE)
        (profiles / "n0-lock.html").write_text(LOCK_PAGE)
        (profiles / "n1-lock.html").write_text(ONE_LOCK_PAGE)
        (profiles / "n2-lock.html").write_text(ONE_LOCK_PAGE)
        md, _ = self.generate(d)
        put = md.split("### put")[1].split("### get")[0]
        self.assertIn("[phases/01-put/profiles/n0-lock.html]", put, "two monitors: worth opening")
        self.assertNotIn("n1-lock.html", put)
        self.assertNotIn("n2-lock.html", put)
        self.assertIn(
            "Lock profiles: the dominant monitor is `java.lang.Object`, taken in `B.lock`: 90% of 30 lock samples over "
            "3 graphs.\nThe lock graphs of n1 and n2 are not listed: each holds that monitor alone (99.5% or more of "
            "their 10 and 10 samples).",
            put,
        )


class ComparedRunsTest(PageCase):
    def run_like(self, name: str, kind="phases", executor="local", labels=("put", "get"), who="test") -> Path:
        d = write_run(self.root, name, 1.0)

        def change(doc):
            doc |= {"kind": kind, "executor": executor, "name": who}
            for p, label in zip(doc["phases"], labels):
                p["label"] = label

        edit(d, change)
        return d

    def test_the_previous_report_is_of_the_same_kind_with_a_phase_in_common(self):
        same = self.run_like("20260101-000000-lab")
        self.run_like("20260102-000000-search", kind="saturation")
        self.run_like("20260103-000000-k8s", executor="k8s")
        self.run_like("20260104-000000-other", labels=("mixed", "outage"))
        this = self.run_like("20260105-000000-lab")
        self.assertEqual(same, runs.previous_run(this, None))
        self.run_like("20260104-120000-mine", who="mine")
        mine = self.run_like("20260105-120000-mine", who="mine")
        self.assertEqual("20260104-120000-mine", runs.previous_run(mine, None).name, "the same experiment first")
        lone = self.run_like("20260106-000000-lone", who="lone")
        self.assertEqual("20260105-120000-mine", runs.previous_run(lone, None).name, "else the newest comparable")

    def test_without_a_comparable_report_the_section_says_so_in_a_line(self):
        self.run_like("20260101-000000-search", kind="saturation")
        this = self.run_like("20260102-000000-lab")
        self.assertIsNone(runs.previous_run(this, None))
        md, _ = self.generate(this)
        section = md.split("## Comparison with the previous report\n")[1].strip()
        self.assertTrue(section.startswith("No previous report of this kind with a measured phase"), section)
        self.assertNotIn("What differs", md)

    def graphs(self, d: Path, page: str) -> None:
        profiles = d / "phases" / "01-put" / "profiles"
        profiles.mkdir(parents=True)
        (profiles / "n0-cpu.html").write_text(page)

    def test_differential_graphs_only_against_a_report_beside_this_one_and_none_left_behind(self):
        elsewhere = self.root / "elsewhere"
        prev = write_run(elsewhere, "20260101-000000-lab", 1.0)
        self.graphs(prev, test_lab.FlameGraphTest.PAGE)
        this = write_run(self.root, "20260102-000000-lab", 1.0)
        self.graphs(this, test_lab.FlameGraphTest.PAGE)
        self.generate(this)
        diff = this / "phases" / "01-put" / "profiles" / "n0-cpu-diff.html"
        diff.write_text("<html>against a run no longer here</html>")
        self.assertIn("differential graph phases/01-put/profiles/n0-cpu-diff.html is not linked from the report",
                      check.problems(this))
        md, _ = self.generate(this, compare=prev)
        self.assertIn("Previous: [`", md, "compared, as asked")
        self.assertNotIn("differential against", md)
        self.assertFalse(diff.exists(), "the stale differential graph is gone")
        beside = write_run(self.root, "20260101-000000-lab", 1.0)
        self.graphs(beside, test_lab.FlameGraphTest.PAGE)
        md, _ = self.generate(this)
        self.assertIn("[differential against the previous run](phases/01-put/profiles/n0-cpu-diff.html)", md)
        self.assertTrue(diff.exists())
        self.assertNotIn("is not linked from the report", " ".join(check.problems(this)))


class RestartedNodeTest(unittest.TestCase):
    def test_cpu_from_the_samples_covers_the_seconds_the_node_did_not_answer(self):
        down = {"cpu_cores": None, "up": False}
        samples = [
            {"t": 0.0, "cpu_cores": 0.5, "up": True},
            {"t": 1.0, "cpu_cores": 0.5, "up": True},
            {"t": 2.0, **down},
            {"t": 3.0, **down},
            # The first answer after the restart: CPU of the new process over the 3 s since the last answer.
            {"t": 4.0, "cpu_cores": 1.0, "up": True},
            {"t": 5.0, "cpu_cores": 0.25, "up": True},
        ]
        self.assertAlmostEqual(0.5 + 0.5 + 3 * 1.0 + 0.25, views.series_cpu_s(samples, 1.0))
        self.assertIsNone(views.series_cpu_s([{"t": 0.0, **down}], 1.0))

    def test_the_cpu_table_names_the_node_by_both_processes_and_counts_it(self):
        run = {"nodes": [{"name": "n0", "pid": 10}, {"name": "n2", "pid": 31, "pids": [30, 31]}]}
        phase = {
            "faults": [{"kind": "kill", "node": "n2", "pid_before": 30, "pid_after": 31}],
            "result": {"requests": 1000},
            "cpu": {"wall_s": 4.0, "processes": {"10": {"cores": 0.5, "us_per_request": 2000.0},
                                                 "30": {"cores": float("nan"), "us_per_request": float("nan")}}},
        }
        ts = {"interval_s": 1.0, "nodes": {"n2": [{"t": float(t), "cpu_cores": 0.5, "up": True} for t in range(4)]}}
        rows = views.node_rows(run, phase, ts)
        self.assertEqual(["node n0 (pid 10)", "node n2 (pid 30, started again as 31)"], [r["label"] for r in rows])
        self.assertAlmostEqual(0.5, rows[1]["cores"])
        self.assertAlmostEqual(2000.0, rows[1]["us_per_request"])
        self.assertIn("Node n2 was killed and started again during the phase", rows[1]["note"])
        self.assertEqual("", rows[0]["note"])
        # Without its samples the node keeps its name and no figure.
        rows = views.node_rows(run, phase, None)
        self.assertEqual("node n2 (pid 30, started again as 31)", rows[1]["label"])
        self.assertNotEqual(rows[1]["cores"], rows[1]["cores"], "NaN: shown as a dash")


if __name__ == "__main__":
    unittest.main()
