"""Self-tests of how the lab shows the cluster heal: the nodes' healing counters read from their
Prometheus page and differenced per phase, the outage phase's freeze of a node and the wait for the
heal, and their place in the report and its check. No cluster: fakes and a sleeping process.
Run: make lab-selftest."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from lab import check, faults, healing, load, local, recovery, report, runrecord, settings
from lab.scenarios import phases as phase_scenario
from lab.tests.test_lab import FakeExecutor, write_run

PAGE = """# HELP kvlab_hints_written_total Hints kept of writes peers missed
# TYPE kvlab_hints_written_total counter
kvlab_hints_written_total{application="kvlab"} 120.0
kvlab_hints_replayed_total{application="kvlab"} 100.0
kvlab_hints_dropped_total{application="kvlab"} 0.0
kvlab_hints_pending{application="kvlab"} 20.0
kvlab_repair_rounds_total{application="kvlab",outcome="complete"} 4.0
kvlab_repair_rounds_total{application="kvlab",outcome="failed"} 1.0
kvlab_repair_keys_compared_total{application="kvlab"} 37.0
kvlab_repair_records_total{application="kvlab",direction="received"} 5.0
kvlab_repair_records_total{application="kvlab",direction="sent"} 3.0
kvlab_handoff_records_moved_total{application="kvlab"} 0.0
kvlab_handoff_previous_owner_reads_total{application="kvlab"} 0.0
kvlab_tombstones_purged_total{application="kvlab"} 2.0
kvlab_handoff_leaving{application="kvlab"} 0.0
kvlab_cluster_nodes{application="kvlab"} 3.0
kvlab_requests_seconds_count{application="kvlab",operation="put",status="201"} 999.0
kvlab_rocksdb{application="kvlab",property="a,b"} 7.0
"""


def figures(**overrides) -> dict:
    base = healing.parse(PAGE)
    return base | overrides


class ParseTest(unittest.TestCase):
    def test_the_healing_figures_of_a_prometheus_page(self):
        self.assertEqual(
            {
                "hints_written": 120.0,
                "hints_replayed": 100.0,
                "hints_dropped": 0.0,
                "repair_rounds": 4.0,
                "repair_rounds_failed": 1.0,
                "keys_compared": 37.0,
                "repair_sent": 3.0,
                "repair_received": 5.0,
                "records_moved": 0.0,
                "previous_owner_reads": 0.0,
                "tombstones_purged": 2.0,
                "hints_pending": 20.0,
                "leaving": 0.0,
                "topology_nodes": 3.0,
            },
            healing.parse(PAGE),
        )

    def test_series_of_several_pods_add_up_and_a_page_without_them_gives_nothing(self):
        page = 'kvlab_hints_written_total{application="kvlab",pod="a"} 1.0\nkvlab_hints_written_total{pod="b"} 2.0\n'
        self.assertEqual({"hints_written": 3.0}, healing.parse(page))
        self.assertEqual({}, healing.parse("# nothing\nprocess_cpu_usage 0.5\n"))

    def test_management_url_is_the_client_port_plus_1000(self):
        self.assertEqual("http://127.0.0.1:9280", healing.management_url("http://127.0.0.1:8280"))
        self.assertEqual("http://localhost:9080", healing.management_url("http://localhost:8080/"))


class OverHttpTest(unittest.TestCase):
    def test_sample_and_repair_ask_a_nodes_management_port(self):
        from lab.tests.test_cluster_status import FakeNode, closed_port, fake_node, kvlab_status

        with fake_node(kvlab_status()) as url:
            down = closed_port()
            got = healing.sample({"n0": url, "n1": down}, timeout=2)
            self.assertEqual(1300.0, got["n0"]["hints_written"])
            self.assertEqual(1234.0, got["n0"]["hints_pending"])
            self.assertIsInstance(got["n1"], str)
            self.assertEqual("", healing.request_repair(url, token=FakeNode.token.encode()))
            self.assertEqual([("/actuator/kvlab/repair", "application/json", b"{}")], FakeNode.repairs)
            # Without the cluster's secret the node refuses it, and the lab says so.
            self.assertIn("Unauthorized", healing.request_repair(url))
            self.assertEqual(kvlab_status(), healing.status(url))
            self.assertIn("/actuator/kvlab/repair", healing.request_repair(down))


class DeltaTest(unittest.TestCase):
    def test_counters_are_differenced_gauges_taken_at_the_end_and_summed_over_nodes(self):
        before = {"n0": figures(), "n1": figures(hints_written=0.0, hints_pending=0.0)}
        after = {
            "n0": figures(hints_written=150.0, hints_replayed=140.0, hints_pending=10.0, repair_sent=4.0),
            "n1": figures(hints_written=7.0, hints_pending=0.0, records_moved=11.0),
        }
        d = healing.delta(before, after)
        self.assertEqual(30.0, d["nodes"]["n0"]["hints_written"])
        self.assertEqual(40.0, d["nodes"]["n0"]["hints_replayed"])
        self.assertEqual(10.0, d["nodes"]["n0"]["hints_pending"])
        self.assertEqual(37.0, d["total"]["hints_written"])
        self.assertEqual(10.0, d["total"]["hints_pending"])
        self.assertEqual(11.0, d["total"]["records_moved"])
        self.assertEqual(1.0, healing.repaired(d))
        self.assertEqual(3.0, d["total"]["topology_nodes"])
        self.assertEqual({}, d["missing"])
        self.assertTrue(healing.anything(d))

    def test_a_node_restarted_meanwhile_counts_from_its_restart(self):
        d = healing.delta({"n0": figures(hints_written=500.0)}, {"n0": figures(hints_written=12.0)})
        self.assertEqual(12.0, d["nodes"]["n0"]["hints_written"])

    def test_a_node_that_could_not_be_read_is_missing_with_why(self):
        d = healing.delta({"n0": figures(), "n1": "refused"}, {"n0": figures(), "n1": figures()})
        self.assertEqual({"n1": "refused"}, d["missing"])
        self.assertEqual(["n0"], list(d["nodes"]))
        self.assertFalse(healing.anything(healing.delta({"n0": figures(hints_pending=0.0)}, {"n0": figures(hints_pending=0.0)})))


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s


class AwaitHealedTest(unittest.TestCase):
    def test_waits_for_the_hints_then_for_a_round_of_every_node_with_every_peer(self):
        clock, asked = Clock(), []
        pending = iter([30.0, 5.0, 0.0])

        def sampler(nodes):
            return {n: {"hints_pending": next(pending) if n == "n0" else 0.0} for n in nodes}

        rounds = {"n0": 0, "n1": 0}

        def reader(url):
            name = "n0" if url.endswith("0") else "n1"
            rounds[name] += 1
            started = "2099-01-01T00:00:00Z" if rounds[name] > 1 else "2000-01-01T00:00:00Z"
            return {"repair": {"peers": {"x": {"running": False, "lastRound": {"started": started, "complete": True}}}}}

        out = healing.await_healed(
            {"n0": "http://m0", "n1": "http://m1"}, 60, lambda m: None, clock=clock, wall=lambda: 1e9, sleep=clock.sleep,
            sampler=sampler, repairer=lambda url: asked.append(url) or "", reader=reader,
        )
        self.assertTrue(out["healed"], out)
        self.assertEqual(2.0, out["hints_replayed_s"])
        self.assertEqual(4.0, out["repaired_s"])
        self.assertEqual(["http://m0", "http://m1"], asked)

    def test_gives_up_at_the_timeout_and_says_why(self):
        clock = Clock()
        out = healing.await_healed(
            {"n0": "http://m0"}, 5, lambda m: None, clock=clock, wall=time.time, sleep=clock.sleep,
            sampler=lambda nodes: {"n0": {"hints_pending": 7.0}}, repairer=lambda url: "", reader=lambda url: None,
        )
        self.assertFalse(out["healed"])
        self.assertEqual("7 hints still pending after 5 s", out["why"])

    def test_a_round_that_failed_or_runs_is_not_enough(self):
        late = "2099-01-01T00:00:00Z"
        self.assertFalse(healing.rounds_since({"repair": {"peers": {"x": {"running": True, "lastRound": {"started": late, "complete": True}}}}}, 0))
        self.assertFalse(healing.rounds_since({"repair": {"peers": {"x": {"running": False, "lastRound": None}}}}, 0))
        self.assertTrue(healing.rounds_since({"repair": {"peers": {"x": {"running": False, "lastRound": {"started": late, "complete": True}}}}}, 0))


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


class PauseTest(unittest.TestCase):
    def setUp(self):
        self.proc = subprocess.Popen(["sleep", "60"])

    def tearDown(self):
        self.proc.kill()
        self.proc.wait()

    def wait_state(self, wanted: str, timeout: float = 3.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and state(self.proc.pid) != wanted:
            time.sleep(0.02)
        return state(self.proc.pid)

    def test_the_node_is_stopped_for_its_window_then_goes_on(self):
        f = faults.Pause("n2", 0.2, 0.5, pid=self.proc.pid).start(time.monotonic())
        self.assertEqual("T", self.wait_state("T"))
        self.assertEqual("S", self.wait_state("S"))
        f.stop()
        rec = f.record()
        self.assertEqual("pause", rec["kind"])
        self.assertAlmostEqual(0.2, rec["began_at_s"], delta=0.15)
        self.assertAlmostEqual(0.7, rec["ended_at_s"], delta=0.3)

    def test_stopping_early_never_leaves_the_node_frozen(self):
        f = faults.Pause("n2", 0.1, 30, pid=self.proc.pid).start(time.monotonic())
        self.assertEqual("T", self.wait_state("T"))
        f.stop()
        self.assertEqual("S", self.wait_state("S"))
        self.assertIsNotNone(f.record()["ended_at_s"])

    def test_a_phase_that_ends_before_the_window_freezes_nothing(self):
        f = faults.Pause("n2", 5, 1, pid=self.proc.pid).start(time.monotonic())
        f.stop()
        time.sleep(0.1)
        self.assertEqual("S", state(self.proc.pid))
        self.assertIsNone(f.record()["began_at_s"])


class OutageExecutor(FakeExecutor):
    """A fake executor that also reads healing counters, freezes and waits for the heal."""

    def __init__(self):
        super().__init__()
        self.samples = 0
        self.frozen = []

    def heal_sample(self):
        self.samples += 1
        written = 50.0 if self.frozen else 0.0
        return {"n0": figures(hints_written=written, hints_replayed=written, hints_pending=0.0), "n1": figures()}

    def fault(self, kind, index, after_s, for_s):
        executor = self

        class FakeFreeze:
            def start(self, t0):
                executor.frozen.append((after_s, for_s))
                return self

            def stop(self):
                pass

            def record(self):
                return {"kind": kind, "node": "n1", "at_s": after_s, "for_s": for_s, "began_at_s": after_s,
                        "ended_at_s": after_s + for_s, "error": "", "what": "node n1 paused"}

        return FakeFreeze()

    def await_healed(self, timeout_s):
        return {"healed": True, "hints_replayed_s": 3.0, "repaired_s": 4.5, "timeout_s": timeout_s, "why": ""}


class OutagePhaseTest(unittest.TestCase):
    def run_with(self, phases, executor):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = settings.RunConfig(
                targets=["http://127.0.0.1:1"], pids=[], phases=phases, duration_s=30, warmup_s=0, events=["cpu"],
                reports_dir=Path(tmp), heal_timeout_s=77,
            )
            with mock.patch.object(runrecord.Run, "finish", lambda run: json.loads((run.dir / "run.json").read_text())):
                return phase_scenario.run_phases(cfg, executor)

    def test_the_outage_runs_the_mixed_load_freezes_the_middle_third_and_records_the_heal(self):
        executor = OutageExecutor()
        doc = self.run_with(["put", "outage"], executor)
        self.assertEqual([("put", "put"), ("outage", "mixed")], [(label, spec.scenario) for label, spec in executor.specs])
        self.assertEqual([(10.0, 10.0)], executor.frozen)
        put, outage = doc["phases"]
        self.assertNotIn("fault", put)
        self.assertEqual(0.0, put["healing"]["total"]["hints_written"])
        self.assertEqual("pause", outage["fault"]["kind"])
        self.assertEqual({"healed": True, "hints_replayed_s": 3.0, "repaired_s": 4.5, "timeout_s": 77, "why": ""}, outage["heal"])
        self.assertEqual(50.0, outage["healing"]["total"]["hints_written"])
        self.assertEqual([], outage["profiles"], "a frozen node is not profiled")
        # Its recovery from the phase's time series, as the fault scenario's faults get theirs.
        rec = outage["fault"]["recovery"]
        self.assertEqual(rec and sorted(rec), sorted(recovery.figures({}, 10.0, 20.0, 0.0, None, 500)))

    def test_an_executor_that_cannot_freeze_is_refused_before_the_first_phase(self):
        executor = FakeExecutor()
        with self.assertRaises(SystemExit) as e:
            self.run_with(["fill", "outage"], executor)
        self.assertIn("executor cannot", str(e.exception))
        self.assertEqual([], executor.specs)

    def test_outage_takes_no_tool(self):
        with self.assertRaises(SystemExit):
            phase_scenario.phase_spec("outage@wrk")
        self.assertEqual(("outage", None), phase_scenario.phase_spec("outage"))

    def test_phases_without_counters_record_none(self):
        executor = FakeExecutor()
        doc = self.run_with(["put"], executor)
        self.assertIsNone(doc["phases"][0]["healing"])

    def test_the_local_executor_needs_two_nodes_and_their_pids_to_freeze_one(self):
        cfg = settings.RunConfig(targets=["http://127.0.0.1:8280"], pids=[1])
        with self.assertRaises(SystemExit):
            local.LocalExecutor(cfg).fault("pause", -1, 1, 1)
        cfg = settings.RunConfig(targets=["http://127.0.0.1:8280", "http://127.0.0.1:8281"], pids=[11, 22])
        f = local.LocalExecutor(cfg).fault("pause", -1, 3, 4)
        self.assertEqual(("n1", 22, 3, 4), (f.node, f.pid, f.at_s, f.for_s))
        self.assertEqual({"n0": "http://127.0.0.1:9280", "n1": "http://127.0.0.1:9281"}, local.LocalExecutor(cfg).management())


def healing_of(written: float, replayed: float, pending: float = 0.0, **more) -> dict:
    before = {"n0": figures(hints_written=0.0, hints_replayed=0.0), "n1": figures(hints_written=0.0, hints_replayed=0.0)}
    after = {
        "n0": figures(hints_written=written, hints_replayed=replayed, hints_pending=pending, **more),
        "n1": figures(hints_written=0.0, hints_replayed=0.0, hints_pending=0.0),
    }
    return healing.delta(before, after)


def with_healing(run_dir: Path, outage: dict | None) -> None:
    doc = json.loads((run_dir / "run.json").read_text())
    doc["phases"][0]["healing"] = healing_of(0, 0)
    doc["phases"][1]["healing"] = healing_of(0, 0)
    if outage is not None:
        extra = json.loads(json.dumps(doc["phases"][1]))
        extra |= {"label": "outage", "scenario": "mixed", "dir": "phases/03-outage"} | outage
        doc["phases"].append(extra)
    (run_dir / "run.json").write_text(json.dumps(doc))


OUTAGE = {
    "fault": {"kind": "pause", "node": "n2", "at_s": 3.3, "for_s": 3.3, "began_at_s": 3.31, "ended_at_s": 6.62,
              "error": "", "what": "node n2 (pid 4242) paused (SIGSTOP, then SIGCONT)"},
    "heal": {"healed": True, "hints_replayed_s": 8.2, "repaired_s": 9.7, "timeout_s": 120, "why": ""},
    "healing": healing_of(412, 412, repair_rounds=10.0, keys_compared=0.0, repair_sent=0.0, repair_received=0.0),
}


class HealingReportTest(unittest.TestCase):
    def test_the_report_shows_the_healing_phase_by_phase_and_the_outage_in_words(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-heal", 1.0)
            with_healing(d, OUTAGE)
            md_path, html_path = report.generate(d)
            md, page = md_path.read_text(), html_path.read_text()
            self.assertIn("## Healing", md)
            self.assertIn(
                "| phase | hints written | hints replayed | hints pending at the end | repair rounds (failed) | keys compared "
                "| records repaired (sent + received) | records moved | tombstones purged |",
                md,
            )
            self.assertIn("| put | 0 | 0 | 0 | 0 (0) | 0 | 0 (0 + 0) | 0 | 0 |", md)
            self.assertIn("| outage | 412 | 412 | 0 | 6 (0) | 0 | 0 (0 + 0) | 0 | 0 |", md)
            self.assertIn(
                "**outage**: node n2 (pid 4242) paused (SIGSTOP, then SIGCONT): from second 3.3 to 6.6 of the load; its peers kept "
                "412 hints of the writes it missed and replayed 412, all of them 8.2 s after the load ended; repair rounds "
                "between every two nodes then compared 0 keys one by one and copied 0 records (0 sent, 0 received): "
                "the cluster healed within 10 s of the load's end.",
                md,
            )
            self.assertIn("Healing in this phase, node by node", md)
            self.assertIn("| n0 | 412 | 412 | 0 | 0 |", md)
            self.assertIn("outage: node n2 (pid 4242) paused", md.split("## Conclusion")[0], "a finding")
            self.assertIn('<h2 id="healing">Healing</h2>', page)
            self.assertIn('<td>outage</td>\n<td style="text-align: right;">412</td>', page)
            self.assertEqual([], check.healing_problems(json.loads((d / "run.json").read_text()), md))

    def test_a_run_without_an_outage_says_in_one_line_that_no_phase_needed_healing(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-calm", 1.0)
            with_healing(d, None)
            md = report.generate(d)[0].read_text()
            section = md.split("## Healing\n")[1].split("\n## ")[0]
            self.assertEqual("No phase needed healing", section.strip()[:23])
            self.assertNotIn("| phase | hints written |", md, "a table of zeros")
            self.assertNotIn("Healing: nothing to heal in this phase", md, "the section said it for every phase")
            self.assertEqual([], check.healing_problems(json.loads((d / "run.json").read_text()), md))
            md = md.replace("No phase needed healing", "Nothing")
            self.assertEqual(
                ["report.md does not say that no phase needed healing, though it read the healing counters"],
                check.healing_problems(json.loads((d / "run.json").read_text()), md),
            )

    def test_a_node_without_a_peer_has_no_healing_section(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-alone", 1.0)
            doc = json.loads((d / "run.json").read_text())
            for p in doc["phases"]:
                p["healing"] = healing.delta({"n0": figures(hints_pending=0.0)}, {"n0": figures(hints_pending=0.0)})
            (d / "run.json").write_text(json.dumps(doc))
            md = report.generate(d)[0].read_text()
            self.assertNotIn("## Healing", md)
            self.assertNotIn("heal", md.split("## Findings")[1].split("## Conclusion")[0])
            self.assertEqual([], check.healing_problems(doc, md))

    def test_a_phase_that_needed_healing_without_an_outage_is_a_finding(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-busy", 1.0)
            with_healing(d, None)
            doc = json.loads((d / "run.json").read_text())
            doc["phases"][0]["healing"] = healing_of(324, 96, pending=228.0)
            (d / "run.json").write_text(json.dumps(doc))
            md = report.generate(d)[0].read_text()
            self.assertIn(
                "- put: 324 hints written (replica calls failed or timed out), 96 hints replayed, 228 still pending at its end.", md
            )
            self.assertNotIn("No phase needed healing", md)

    def test_a_run_that_read_no_counters_has_no_healing_section(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-old", 1.0)
            md = report.generate(d)[0].read_text()
            self.assertNotIn("## Healing", md)
            self.assertEqual([], check.healing_problems(json.loads((d / "run.json").read_text()), md))

    def test_the_check_finds_an_outage_that_did_not_heal(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-sick", 1.0)
            sick = OUTAGE | {
                "heal": {"healed": False, "hints_replayed_s": None, "repaired_s": None, "timeout_s": 120,
                         "why": "12 hints still pending after 120 s"},
                "healing": healing_of(0, 0, pending=12.0),
            }
            with_healing(d, sick)
            md = report.generate(d)[0].read_text()
            self.assertIn("the cluster had not healed when the lab stopped waiting (12 hints still pending after 120 s)", md)
            found = check.healing_problems(json.loads((d / "run.json").read_text()), md)
            self.assertEqual(
                [
                    "phase outage: no hint was written while a node was frozen",
                    "phase outage: no hint was replayed once the node went on",
                    "phase outage: 12 hints still pending at its end",
                    "phase outage: the cluster did not heal: 12 hints still pending after 120 s",
                ],
                found,
            )

    def test_the_check_wants_a_row_per_phase(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = write_run(Path(tmp), "20260101-000000-rows", 1.0)
            with_healing(d, None)
            doc = json.loads((d / "run.json").read_text())
            doc["phases"][0]["healing"] = healing_of(12, 12)
            (d / "run.json").write_text(json.dumps(doc))
            md = report.generate(d)[0].read_text()
            self.assertIn("Healing: nothing to heal in this phase", md.split("### get")[1], "get healed nothing, put did")
            md = md.replace("\n| get | 0 |", "\n| got | 0 |")
            self.assertEqual(
                ["the healing table has no row for phase get"],
                check.healing_problems(json.loads((d / "run.json").read_text()), md),
            )


if __name__ == "__main__":
    unittest.main()
