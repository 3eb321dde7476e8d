"""Self-tests of lab.repair_cost_summary: the first screen of `make lab-repair-cost` states each
target with its figure and verdict from a run's summary.json. Run: make lab-selftest."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from lab import repair_cost_summary


def fg(p99s: list[float]) -> dict:
    return {"runs": len(p99s), "p99_ms": sorted(p99s)[len(p99s) // 2], "each_p99_ms": p99s, "p50_ms": 1.0,
            "achieved_rate": 6000.0, "node_cores": 1.5, "repair_rounds": 12}


SUMMARY = {
    "setup": {"commit": "abc1234", "jars": ["head", "base"], "jar_base": "/tmp/base.jar", "keys": 1_000_000, "value_size": 100,
              "runs": 1, "get_rate": 6000, "put_rate": 8000, "duration": "30s", "warmup": "30s", "loadavg": "3.1 2.0 1.5", "cores": 2},
    "foreground": {"get/off/head": fg([10.0]), "get/on/head": fg([10.5]), "get/on/base": fg([13.0]),
                   "put/off/head": fg([20.0]), "put/on/head": fg([23.0]), "put/on/base": fg([26.0])},
    "foreground_p99_ratio": {"get/on/head": {"each_pair": [1.05]}},
    "steady": {"head/default": {"runs": 1, "wall_s": 0.5, "us_per_key_round": 0.2, "each_us_per_key_round": [0.2]},
               "base/default": {"runs": 1, "wall_s": 3.0, "us_per_key_round": 1.5, "each_us_per_key_round": [1.5]}},
}


class RepairCostSummaryTest(unittest.TestCase):

    def test_each_target_with_its_figure_and_verdict(self):
        text = repair_cost_summary.markdown(SUMMARY)
        rows = [line for line in text.splitlines() if line.startswith("| ") and ("within +10 %" in line or "round where nothing" in line)]
        get_head = next(r for r in rows if r.startswith("| GET") and "| head |" in r)
        self.assertIn("1.05×", get_head)
        self.assertIn("**met**", get_head)
        self.assertIn("run by run 1.05×", get_head)
        put_head = next(r for r in rows if r.startswith("| PUT") and "| head |" in r)
        self.assertIn("1.15×", put_head)
        self.assertIn("**not met**", put_head)
        cpu_head = next(r for r in rows if "| head |" in r and "round where nothing" in r)
        self.assertIn("0.20 s per round", cpu_head)
        self.assertIn("**met**", cpu_head)
        cpu_base = next(r for r in rows if "| base |" in r and "round where nothing" in r)
        self.assertIn("1.50 s per round", cpu_base)
        self.assertIn("**not met**", cpu_base)
        self.assertTrue(text.startswith("# What repair costs"))
        self.assertIn("load average 3.1 2.0 1.5", text)

    def test_what_a_run_did_not_measure_is_said_so(self):
        text = repair_cost_summary.markdown({"setup": {"keys": 100_000}, "steady": SUMMARY["steady"]})
        self.assertIn("not measured in this run", text)
        cpu = next(line for line in text.splitlines() if "| head |" in line and "round where nothing" in line)
        self.assertIn("not 1,000,000", cpu)
        self.assertIn("not measured", cpu)
        self.assertNotIn("**met**", cpu)

    def test_cpu_under_the_idle_baseline_reads_as_noise_not_as_a_negative_cost(self):
        steady = {"head/default": {"runs": 1, "wall_s": 0.9, "us_per_key_round": -0.192, "each_us_per_key_round": [-0.192]}}
        text = repair_cost_summary.markdown({"setup": {"keys": 1_000_000}, "steady": steady})
        row = next(line for line in text.splitlines() if line.startswith("| head/default"))
        self.assertIn("0 µs (within the idle baseline's noise: -0.192)", row)
        target = next(line for line in text.splitlines() if "round where nothing" in line and "| head |" in line)
        self.assertIn("0 s (within the idle baseline's noise", target)

    def test_writes_summary_md_beside_the_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "summary.json"
            source.write_text(json.dumps(SUMMARY))
            self.assertEqual(repair_cost_summary.main([str(source)]), 0)
            self.assertIn("## Targets", (Path(tmp) / "summary.md").read_text())


if __name__ == "__main__":
    unittest.main()
