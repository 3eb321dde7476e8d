"""The lab's scenarios, what a run does with its nodes: phases at a fixed rate (phases), the
saturation search (saturation), faults on a schedule (faults), a long steady load (soak), a backup
under load, every node's data destroyed and restored (disaster). python -m
lab has a command for each one listed in SCENARIOS, with the options every run takes (lab.options) and the scenario's own.

To add a scenario: write lab/scenarios/<name>.py with a function that runs it (a Run of
lab.runrecord, its phases through run.phase, warm-ups from lab.warmup) and its SCENARIO (a
Scenario: command, options, main), then add it to SCENARIOS below; scripts/lab.sh and k8s/lab.sh
map `make lab SCENARIO=<name>` to its command, and a new knob goes into defaults.env."""

from __future__ import annotations

from . import disaster, faults, phases, saturation, soak
from .scenario import Scenario

SCENARIOS: dict[str, Scenario] = {
    s.command: s for s in (phases.SCENARIO, saturation.SCENARIO, faults.SCENARIO, soak.SCENARIO, disaster.SCENARIO)
}

__all__ = ["SCENARIOS", "Scenario"]
