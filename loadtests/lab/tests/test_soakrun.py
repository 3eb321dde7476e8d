"""Self-tests of the soak scenario's run (lab.scenarios.soak) with an executor that sends no load: where its
rate comes from (a search at its start, a rate given, an earlier run's search), the phases it runs
in order, what run.json records, and how make, scripts/lab.sh and k8s/lab.sh start it."""

from __future__ import annotations

import json
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from lab import load, nodeseries, runrecord, settings, tools
from lab.scenarios import soak
from lab.tests import test_k8s
from lab.tests.test_lab import FakeExecutor


class LoadedExecutor(FakeExecutor):
    """A cluster that holds the SLO up to `holds` requests/s: p99 2 ms up to it, 20 ms above."""

    def __init__(self, holds: int = 1500):
        super().__init__()
        self.holds = holds

    def run(self, prepared, status=None):
        rate = prepared.spec.rate or 0
        p99 = 2.0 if rate <= self.holds else 20.0
        result = {"achieved_rate": rate, "requested_rate": rate, "error_rate": 0.0,
                  "latency": {"all": {"percentiles": {"p99": p99}}}}
        return load.PhaseRun(result, {}, [], [0], "", "")


def soak_run(plan: soak.SoakPlan, executor: FakeExecutor, tmp: str) -> tuple[dict, list]:
    cfg = settings.RunConfig(targets=["http://127.0.0.1:1"], pids=[], warmup_s=4, reports_dir=Path(tmp))
    sat = settings.Saturation(scenario="get", start_rate=1000, factor=1.5, max_steps=5, step_duration_s=2)
    with mock.patch.object(runrecord.Run, "finish", lambda run: run.dir):
        run_dir = soak.run_soak(cfg, plan, sat, executor)
    return json.loads((run_dir / "run.json").read_text()) | {"dir": str(run_dir)}, executor.specs


class SoakRunTest(unittest.TestCase):
    def test_a_search_of_the_mixed_load_first_then_the_soak_at_its_share_of_the_highest_rate(self):
        with tempfile.TemporaryDirectory() as tmp:
            run, specs = soak_run(soak.SoakPlan(duration_s=120, sample_s=1), LoadedExecutor(), tmp)
            record = run["phases"][-1]
            self.assertTrue((Path(run["dir"]) / record["resources"]).is_file())
        labels = [label for label, _ in specs]
        self.assertEqual(labels, ["fill", "warm-up mixed@1000", "warm-up mixed@1000 on new connections",
                                  "mixed@1000", "mixed@1500", "mixed@2250", "mixed@1875", "mixed@1688", "mixed@1594",
                                  "soak"])
        self.assertEqual({s.scenario for label, s in specs[1:]}, {"mixed"})
        label, spec = specs[-1]
        self.assertEqual((spec.rate, spec.duration_s), (1050, 120))
        self.assertEqual(run["kind"], "soak")
        self.assertEqual(run["soak"], {"phase": "soak", "rate": 1050, "highest_rate": 1500, "share": 0.7,
                                       "from": "search", "scenario": "mixed"})
        self.assertEqual((run["config"]["rate"], run["config"]["events"]), (1050, []))
        self.assertEqual(run["config"]["soak"]["duration_s"], 120)
        self.assertEqual(run["saturation"]["max_sustainable_rate"], 1500)
        self.assertEqual(record["label"], "soak")

    def test_a_rate_given_is_soaked_at_after_a_warm_up_at_it_without_a_search(self):
        with tempfile.TemporaryDirectory() as tmp:
            run, specs = soak_run(soak.SoakPlan(duration_s=60, rate="800"), LoadedExecutor(), tmp)
        self.assertEqual([(label, s.rate) for label, s in specs],
                         [("fill", None), ("warm-up mixed", 800), ("warm-up mixed on new connections", 800),
                          ("soak", 800)])
        self.assertEqual(run["soak"]["from"], "given")
        self.assertNotIn("saturation", run)

    def test_an_earlier_runs_search_gives_the_highest_rate(self):
        with tempfile.TemporaryDirectory() as tmp:
            earlier = Path(tmp) / "20261101-000000-lab"
            earlier.mkdir()
            search = {"scenario": "mixed", "max_sustainable_rate": 2000}
            (earlier / "run.json").write_text(json.dumps({"saturation": search}))
            run, specs = soak_run(soak.SoakPlan(duration_s=60, rate=str(earlier), share=0.5), LoadedExecutor(), tmp)
        self.assertEqual(specs[-1][1].rate, 1000)
        self.assertEqual((run["soak"]["from"], run["soak"]["highest_rate"]), ("report", 2000))

    def test_a_cluster_that_holds_no_rate_gets_no_soak_and_a_report_that_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            run, specs = soak_run(soak.SoakPlan(duration_s=60), LoadedExecutor(holds=10), tmp)
        self.assertNotIn("soak", [label for label, _ in specs])
        self.assertEqual((run["soak"]["rate"], run["soak"]["highest_rate"]), (None, None))

    def test_what_the_rate_cannot_be_is_refused_before_anything_runs(self):
        executor = LoadedExecutor()
        with tempfile.TemporaryDirectory() as tmp:
            for bad in ("fast", "0", tmp):  # tmp: a directory without run.json
                with self.assertRaisesRegex(SystemExit, "search, a rate in requests/s, or a run directory"):
                    soak_run(soak.SoakPlan(rate=bad), executor, tmp)
            with self.assertRaisesRegex(SystemExit, "a share of the highest rate"):
                soak_run(soak.SoakPlan(share=1.5), executor, tmp)
        self.assertEqual(executor.specs, [])


class LongestSoakTest(unittest.TestCase):
    def test_the_node_sampler_holds_the_longest_soak_and_a_longer_one_is_refused(self):
        longest = soak.SoakPlan(duration_s=nodeseries.MAX_SAMPLES)
        longest.check()
        with self.assertRaisesRegex(SystemExit, "what the node sampler holds"):
            soak.SoakPlan(duration_s=nodeseries.MAX_SAMPLES + 1).check()
        with self.assertRaisesRegex(SystemExit, "from 60 s"):
            soak.SoakPlan(duration_s=59).check()


class StartTest(unittest.TestCase):
    def test_make_lab_scenario_soak_runs_the_soak_command_with_its_knobs_and_no_phases(self):
        out = subprocess.run(["make", "-n", "-s", "lab", "SCENARIO=soak", "SOAK_DURATION=4m", "-o", "build", "-o", "lab-tools"],
                             cwd=tools.ROOT, capture_output=True, text=True, check=True).stdout
        line = next(line for line in out.splitlines() if "scripts/lab.sh" in line)
        self.assertIn("scripts/lab.sh --name soak ", line)
        self.assertIn("--soak-duration='4m'", line)
        self.assertNotIn("--phases", line)

    def test_scripts_lab_sh_knows_the_soak(self):
        p = subprocess.run(["bash", str(tools.ROOT / "scripts" / "lab.sh")], env={"SCENARIO": "chaos", "PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("faults, soak or disaster", p.stderr)

    def test_k8s_lab_sh_hands_the_soak_to_its_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            _, argv = test_k8s.LabScriptTest.lab_sh(self, Path(tmp), SCENARIO="soak")
        self.assertEqual(argv[:3], ["-m", "lab", "soak"])
        self.assertIn("--executor", argv)


if __name__ == "__main__":
    unittest.main()
