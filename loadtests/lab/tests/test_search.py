"""The saturation search: its rule (how it steps the rate, bisects the limit and where it stops), the
search loop that follows it, and the short search that ends a fixed-rate run."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from lab import load, runrecord, search, settings
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


def steps(*rates_ok) -> list[dict]:
    return [{"rate": r, "ok": ok, "why": "" if ok else f"p99 over the SLO at {r}"} for r, ok in rates_ok]


def next_rate(done: list[dict], start=1000, factor=1.5, max_rate=200_000, max_steps=10) -> search.Next:
    return search.next_rate(done, start, factor, max_rate, max_steps)


class NextRateTest(unittest.TestCase):
    def test_the_first_step_is_the_start_rate_then_up_by_the_factor(self):
        self.assertEqual(search.Next(1000), next_rate([]))
        self.assertEqual(search.Next(1500), next_rate(steps((1000, True))))
        self.assertEqual(search.Next(2250), next_rate(steps((1000, True), (1500, True))))
        # A factor too small to move a whole rate still moves it by one.
        self.assertEqual(search.Next(11), search.next_rate(steps((10, True)), 10, 1.01, 100, 5))

    def test_between_the_last_rate_that_held_and_the_first_that_failed_it_bisects(self):
        done = steps((1000, True), (1500, True), (2250, True), (3375, False))
        self.assertEqual(search.Next(2812, bisect=True), next_rate(done))
        done += steps((2812, True))
        self.assertEqual(search.Next(3094, bisect=True), next_rate(done))
        done += steps((3094, False))
        self.assertEqual(search.Next(2953, bisect=True), next_rate(done), "3094/s is 10.03 % above 2812/s")
        done += steps((2953, True))
        stop = next_rate(done)
        self.assertIsNone(stop.rate)
        self.assertEqual(
            "at 3094/s: p99 over the SLO at 3094; the limit lies between 2953/s, which held, and 3094/s (within 10 %)",
            stop.reason,
        )

    def test_the_step_limit_bounds_the_steps_up_not_the_bisection(self):
        done = steps((1000, True), (1500, True), (2250, False))
        self.assertEqual(search.Next(1875, bisect=True), next_rate(done, max_steps=3))
        self.assertEqual("reached the step limit (3 steps)", next_rate(steps((1000, True), (1500, True), (2250, True)), max_steps=3).reason)

    def test_a_failing_first_rate_steps_down_and_stops_above_the_floor(self):
        self.assertEqual(search.Next(666), next_rate(steps((1000, False))))
        stop = next_rate(steps((60, False)), start=60)
        self.assertEqual((None, f"at 60/s: p99 over the SLO at 60; not stepping below {search.MIN_RATE}/s"), (stop.rate, stop.reason))
        stop = next_rate(steps((1000, False), (666, False)), max_steps=2)
        self.assertEqual("at 666/s: p99 over the SLO at 666; reached the step limit (2 steps) before a rate held", stop.reason)

    def test_the_highest_rate_allowed_ends_the_search(self):
        self.assertEqual(
            search.Next(None, "reached the highest rate allowed (2000/s)"),
            next_rate(steps((1000, True), (1500, True)), max_rate=2000),
        )
        self.assertIsNone(next_rate([], start=3000, max_rate=2000).rate)

    def test_the_bracket_is_the_highest_rate_that_held_below_the_lowest_that_failed(self):
        self.assertEqual((2812, 3094), search.bracket(steps((2250, True), (3375, False), (2812, True), (3094, False))))
        self.assertEqual((None, 1000), search.bracket(steps((1000, False))))
        self.assertEqual((1500, None), search.bracket(steps((1000, True), (1500, True))))


class SearchTest(unittest.TestCase):
    def test_a_fixed_rate_run_ends_with_a_short_search_whose_steps_are_marked_and_not_profiled(self):
        executor = CapacityExecutor(capacity=3000)
        doc = run_with(executor, ["put", "get"], settings.Saturation("get", 1000, 2.0, max_steps=5, step_duration_s=7))
        steps = [p for p in doc["phases"] if p.get("saturation_step")]
        # Up by the factor until 4000/s fails, then halving the gap to 3000-3250/s (8 % apart).
        labels = ["get@1000", "get@2000", "get@4000", "get@3000", "get@3500", "get@3250"]
        self.assertEqual(labels, [p["label"] for p in steps])
        self.assertTrue(all(p["profiles"] == [] and p["spec"]["duration_s"] == 7 for p in steps))
        sat = doc["saturation"]
        self.assertEqual(3000, sat["max_sustainable_rate"])
        self.assertEqual(
            "at 3250/s: p99 50.00 ms > SLO 10 ms; the limit lies between 3000/s, which held, and 3250/s (within 10 %)",
            sat["stop_reason"],
        )
        self.assertEqual([True, True, False, True, False, False], [s["ok"] for s in sat["steps"]])
        self.assertEqual([False, False, False, True, True, True], [s["bisect"] for s in sat["steps"]])

    def test_a_search_whose_first_rate_fails_steps_down_until_one_holds(self):
        doc = run_with(CapacityExecutor(capacity=300), ["get"], settings.Saturation("get", 1000, 2.0, max_steps=6))
        sat = doc["saturation"]
        self.assertEqual([1000, 500, 250, 375, 312, 281, 296], [s["rate"] for s in sat["steps"]])
        self.assertEqual(296, sat["max_sustainable_rate"])

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
