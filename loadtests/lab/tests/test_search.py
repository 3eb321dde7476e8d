"""The saturation search: how it steps the rate, where it stops, and the short search that ends a
fixed-rate run."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from lab import load, runrecord, settings
from lab.scenarios import phases as phase_scenario
from lab.tests.test_lab import FakeExecutor


class CapacityExecutor(FakeExecutor):
    """A cluster that keeps p99 at 2 ms up to its capacity and at 50 ms above it."""

    def __init__(self, capacity: int):
        super().__init__()
        self.capacity = capacity

    def run(self, prepared, status=None):
        rate = prepared.spec.rate or 0
        p99 = 2.0 if rate <= self.capacity else 50.0
        result = {
            "achieved_rate": rate,
            "requested_rate": rate,
            "error_rate": 0.0,
            "latency": {"all": {"percentiles": {"p99": p99}}},
        }
        return load.PhaseRun(result, {}, [], [0], "", "")


def run_with(executor, phases, search: settings.Saturation | None, warmup_s: int = 0) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = settings.RunConfig(
            targets=["http://127.0.0.1:1"], pids=[], phases=phases, duration_s=30, warmup_s=warmup_s, events=["cpu"],
            reports_dir=Path(tmp), search=search,
        )
        with mock.patch.object(runrecord.Run, "finish", lambda run: json.loads((run.dir / "run.json").read_text())):
            return phase_scenario.run_phases(cfg, executor)


class SearchTest(unittest.TestCase):
    def test_a_fixed_rate_run_ends_with_a_short_search_whose_steps_are_marked_and_not_profiled(self):
        executor = CapacityExecutor(capacity=3000)
        doc = run_with(executor, ["put", "get"], settings.Saturation("get", 1000, 2.0, max_steps=5, step_duration_s=7))
        steps = [p for p in doc["phases"] if p.get("saturation_step")]
        self.assertEqual(["get@1000", "get@2000", "get@4000"], [p["label"] for p in steps])
        self.assertTrue(all(p["profiles"] == [] and p["spec"]["duration_s"] == 7 for p in steps))
        sat = doc["saturation"]
        self.assertEqual(2000, sat["max_sustainable_rate"])
        self.assertTrue(sat["stop_reason"].startswith("at 4000/s: p99 50.00 ms > SLO 10 ms"), sat["stop_reason"])
        self.assertEqual([True, True, False], [s["ok"] for s in sat["steps"]])

    def test_a_search_whose_first_rate_fails_steps_down_until_one_holds(self):
        doc = run_with(CapacityExecutor(capacity=300), ["get"], settings.Saturation("get", 1000, 2.0, max_steps=6))
        sat = doc["saturation"]
        self.assertEqual([1000, 500, 250], [s["rate"] for s in sat["steps"]])
        self.assertEqual(250, sat["max_sustainable_rate"])

    def test_the_step_limit_ends_a_search_that_never_fails(self):
        doc = run_with(CapacityExecutor(capacity=10**9), ["get"], settings.Saturation("get", 1000, 1.5, max_steps=3))
        self.assertEqual(3, len(doc["saturation"]["steps"]))
        self.assertEqual("reached the step limit (3 steps)", doc["saturation"]["stop_reason"])

    def test_no_search_without_one(self):
        doc = run_with(CapacityExecutor(capacity=3000), ["get"], None)
        self.assertNotIn("saturation", doc)
        self.assertFalse(any(p.get("saturation_step") for p in doc["phases"]))

    def test_a_search_of_a_load_the_phases_did_not_warm_warms_it_first(self):
        executor = CapacityExecutor(capacity=3000)
        run_with(executor, ["put"], settings.Saturation("get", 1000, 2.0, max_steps=1), warmup_s=20)
        labels = [label for label, _ in executor.specs]
        self.assertLess(labels.index("warm-up get@1000"), labels.index("get@1000"))
        executor = CapacityExecutor(capacity=3000)
        run_with(executor, ["get"], settings.Saturation("get", 1000, 2.0, max_steps=1), warmup_s=20)
        self.assertNotIn("warm-up get@1000", [label for label, _ in executor.specs], "get warmed it")


if __name__ == "__main__":
    unittest.main()
