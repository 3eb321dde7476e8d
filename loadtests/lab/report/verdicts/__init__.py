"""A run's verdict: the question its kind of run was made for, the answer in one sentence, and the
rows behind the answer, computed from the run's data (run.json with its env.json), shown first in
its report and written beside it as verdict.json:

    {"kind": "lab" | "saturation" | "faults" | "hotpath" | "scale" | "soak" | "disaster" | "largereads",
     "executor": "local" | "k8s",
     "title": "...",          # the report's title, distinct per kind
     "question": "...",       # the question the run answers, one sentence
     "answer": "...",         # the answer in one sentence, from the data
     "rows": [{"check", "observed", "target", "status": "pass" | "fail" | "info",
               "gate": "performance" | "data" | "none"}],
     "passed": bool,          # no row with status "fail" and a gate other than "none"
     "notes": ["..."],        # how to read the rows (what a fault phase's rows gate on, ...)
     "thresholds": [{"phase", "threshold", "observed", "ok", "gated"}]}  # k6's, measured phases

A row with gate "data" is about correctness (acknowledged writes lost, keys a fill did not store,
a cluster that did not heal); "performance" about speed (the SLO, a rate, a benchmark's target);
"none" is information. lab.report.verdicts.gate turns a verdict into an exit code.

Each kind of run has a builder in BUILDERS: a function of the run that returns its Part (title,
question, answer, rows, notes). A new kind adds a module with its builder and one line in
BUILDERS; rows from one source of data come from one function each, which the builders call:
phases.slo_row (a fixed-rate phase against the SLO), faults.rows (a phase that breaks
something), ledger.rows (a phase's record of acknowledged writes), fill.rows (the keys a fill
stored), thresholds.rows (k6's thresholds of the phases a builder holds to the SLO, added to
every kind's rows here).
"""

from __future__ import annotations

import json
from pathlib import Path

from . import disaster, faults, hotpath, lab, largereads, saturation, scale, soak, thresholds
from .rows import Part

BUILDERS = {
    "lab": lab.build,
    "saturation": saturation.build,
    "faults": faults.build,
    "hotpath": hotpath.build,
    "scale": scale.build,
    "soak": soak.build,
    "disaster": disaster.build,
    "largereads": largereads.build,
}

FILE = "verdict.json"


def kind_of(run: dict) -> str:
    """The verdict's kind of a run: run.json's kind, a fixed-rate run ("phases") being "lab"."""
    kind = run.get("kind", "phases")
    return "lab" if kind == "phases" else kind


def build(run: dict) -> dict:
    kind = kind_of(run)
    if kind not in BUILDERS:
        raise ValueError(f"no verdict for a run of kind {kind!r}: lab.report.verdicts.BUILDERS has {', '.join(BUILDERS)}")
    part: Part = BUILDERS[kind](run)
    k6 = thresholds.table(run, part.held_to_slo)
    rows = part.rows + thresholds.rows(k6)
    return {
        "kind": kind,
        "executor": run.get("executor", "local"),
        "title": part.title,
        "question": part.question,
        "answer": part.answer,
        "rows": rows,
        "passed": not failed(rows, "all"),
        "notes": part.notes,
        "thresholds": k6,
    }


def failed(rows: list[dict], gate: str) -> list[dict]:
    """The rows that fail the gate: "all" (a row that gates data or performance), "data", or "none"."""
    gates = {"all": ("data", "performance"), "data": ("data",), "none": ()}[gate]
    return [r for r in rows if r["status"] == "fail" and r["gate"] in gates]


def write(run_dir: Path, verdict: dict) -> Path:
    path = Path(run_dir) / FILE
    path.write_text(json.dumps(verdict, indent=1, ensure_ascii=False) + "\n")
    return path


def load(run_dir: Path) -> dict | None:
    path = Path(run_dir) / FILE
    return json.loads(path.read_text()) if path.exists() else None
