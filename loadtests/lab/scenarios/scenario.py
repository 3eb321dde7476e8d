"""What a scenario is to the command line: its command, its options, and how it runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Scenario:
    name: str  # make lab SCENARIO=<name>
    command: str  # python -m lab <command>
    help: str
    # Adds the scenario's own options (the ones every run takes are lab.options.add_run_options').
    add_options: Callable[[argparse.ArgumentParser], None]
    # Runs it from the parsed options; the run directory, its report written.
    main: Callable[[argparse.Namespace], Path]
    epilog: str = ""
    # Where it runs: "local" (scripts/lab.sh) and "k8s" (k8s/lab.sh, LAB_TARGET=k8s).
    targets: tuple[str, ...] = ("local", "k8s")
