"""A verdict's parts: its rows and what a kind's builder returns."""

from __future__ import annotations

from dataclasses import dataclass, field

GATES = ("performance", "data", "none")


@dataclass
class Part:
    """What a builder says about its kind of run; the dispatcher adds kind, executor, passed and
    the rows every kind shares (k6's thresholds)."""

    title: str
    question: str
    answer: str
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # The phases held to the SLO, by label: k6's thresholds of these gate the run, as k6's would.
    held_to_slo: list[str] = field(default_factory=list)


def row(check: str, observed: str, target: str, ok: bool | None, gate: str) -> dict:
    """A verdict row; ok None: information, neither pass nor fail."""
    assert gate in GATES, gate
    status = "info" if ok is None else "pass" if ok else "fail"
    return {"check": check, "observed": observed, "target": target, "status": status, "gate": gate}


def failing(rows: list[dict]) -> list[dict]:
    """The rows that failed, whatever they gate."""
    return [r for r in rows if r["status"] == "fail"]


