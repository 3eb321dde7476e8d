"""The executor interface (lab.executor): both executors implement what they claim, a capability
is asked for only where an executor has it, and the seams a new scenario or a phase's companion
hooks into."""

from __future__ import annotations

import inspect
import json
import tempfile
import subprocess
import unittest
from pathlib import Path
from unittest import mock

from lab import executor, phase, runrecord, settings, tools
from lab.k8s import K8sExecutor
from lab.local import LocalExecutor
from lab.scenarios import SCENARIOS
from lab.scenarios import faults as fault_scenario
from lab.scenarios import phases as phase_scenario
from lab.tests.test_faults import FaultsExecutor
from lab.tests.test_lab import FakeExecutor

CAPABILITIES = (executor.MakesFaults, executor.CleansFaults, executor.ReadsHealing, executor.ReadsNodeMetrics)


def claimed(cls: type) -> set[type]:
    return {p for p in (executor.Executor, *CAPABILITIES) if p in cls.__mro__}


class ProtocolTest(unittest.TestCase):
    def assert_implements(self, cls: type, protocol: type) -> None:
        self.assertFalse(getattr(cls, "__abstractmethods__", None), f"{cls.__name__} leaves methods abstract")
        for name in protocol.__abstractmethods__:
            wanted = list(inspect.signature(getattr(protocol, name)).parameters.values())
            have = list(inspect.signature(getattr(cls, name)).parameters.values())
            self.assertEqual([p.name for p in wanted], [p.name for p in have[: len(wanted)]], f"{cls.__name__}.{name}")
            extra = [p.name for p in have[len(wanted) :] if p.default is inspect.Parameter.empty]
            self.assertEqual([], extra, f"{cls.__name__}.{name} needs more than {protocol.__name__} gives")

    def test_both_executors_implement_every_capability_they_claim(self):
        self.assertEqual({executor.Executor, *CAPABILITIES}, claimed(LocalExecutor))
        # A pod's faults leave nothing once the run has ended them: no CleansFaults in Kubernetes.
        self.assertEqual({executor.Executor, executor.MakesFaults, executor.ReadsHealing, executor.ReadsNodeMetrics},
                         claimed(K8sExecutor))
        for cls in (LocalExecutor, K8sExecutor):
            for protocol in claimed(cls):
                self.assert_implements(cls, protocol)

    def test_an_executor_that_misses_a_method_it_claims_cannot_be_made(self):
        class Forgetful(FakeExecutor, executor.Executor, executor.MakesFaults):
            def fault(self, kind, index, at_s, for_s):
                raise SystemExit("no")

        with self.assertRaises(TypeError) as e:
            Forgetful()
        self.assertIn("await_healed", str(e.exception))

    def test_capabilities_are_told_apart_by_what_an_executor_has(self):
        fake = FakeExecutor()
        self.assertFalse(any(isinstance(fake, c) for c in CAPABILITIES))
        self.assertIsInstance(FaultsExecutor(), executor.MakesFaults)
        self.assertIsInstance(FaultsExecutor(), executor.CleansFaults)

    def test_a_run_asks_an_executor_without_capabilities_for_none_of_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = settings.RunConfig(targets=["http://127.0.0.1:1"], pids=[], reports_dir=Path(tmp))
            run = runrecord.Run(cfg, "phases", executor=FakeExecutor())
            self.assertIsNone(run.heal_sample())
            self.assertIsNone(run.node_sampler())
            with self.assertRaises(SystemExit) as e:
                run.outage(1, 1)
            self.assertIn("the fake executor cannot", str(e.exception))
            with self.assertRaises(SystemExit):
                fault_scenario.make_faults(FakeExecutor(), settings.FaultPlan([]))


class Watcher:
    """A companion that records what the phase told it."""

    def __init__(self, faults):
        self.faults, self.calls = faults, []

    def start(self, t0):
        self.calls.append("start")

    def stop(self):
        self.calls.append("stop")

    def abandon(self):
        self.calls.append("abandon")

    def finish(self, record):
        record["watched"] = {"faults": len(self.faults), "calls": list(self.calls)}
        self.calls.append("finish")


class CompanionTest(unittest.TestCase):
    def test_a_companion_runs_beside_the_phases_it_asks_for_and_adds_to_their_record(self):
        made = []

        def factory(phase_):
            if phase_.spec.scenario == "fill":
                return None
            made.append(Watcher(phase_.faults))
            return made[-1]

        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(phase, "COMPANIONS", [factory]):
            cfg = settings.RunConfig(targets=["http://127.0.0.1:1"], pids=[], phases=["fill", "put"], warmup_s=0,
                                     events=[], reports_dir=Path(tmp))
            with mock.patch.object(runrecord.Run, "finish", lambda run: json.loads((run.dir / "run.json").read_text())):
                doc = phase_scenario.run_phases(cfg, FakeExecutor())
        fill, put = doc["phases"]
        self.assertNotIn("watched", fill)
        self.assertEqual({"faults": 0, "calls": ["start", "stop"]}, put["watched"])
        self.assertEqual(["start", "stop", "finish"], made[0].calls)


class ScenarioRegistryTest(unittest.TestCase):
    def test_every_scenario_is_a_command_and_a_scenario_of_make_lab(self):
        from lab import commands

        subcommands = next(a for a in commands.parser("")._actions if a.dest == "command").choices
        scripts = {"local": "scripts/lab.sh", "k8s": "k8s/lab.sh"}
        for command, scenario in SCENARIOS.items():
            self.assertEqual(command, scenario.command)
            self.assertIn(command, subcommands)
            for target, path in scripts.items():
                text = (tools.ROOT / path).read_text()
                self.assertRegex(text, rf"\b{scenario.name}\b", f"{path} does not know SCENARIO={scenario.name}")
                if target in scenario.targets:
                    self.assertRegex(text, rf"\b{command}\b", f"{path} does not run python -m lab {command}")

    def test_k8s_lab_sh_refuses_a_scenario_that_runs_on_local_nodes_only_and_says_why(self):
        for scenario in SCENARIOS.values():
            if "k8s" in scenario.targets:
                continue
            p = subprocess.run(["bash", str(tools.ROOT / "k8s" / "lab.sh")], env={"SCENARIO": scenario.name, "PATH": "/usr/bin:/bin"},
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(f"SCENARIO={scenario.name} runs on local nodes", p.stderr)


if __name__ == "__main__":
    unittest.main()
