"""The gate: a run's verdict as an exit code, for make and CI. GATE=all fails the run when a row that
gates data or performance failed, GATE=data only when a data row failed (acknowledged writes lost,
a cluster that did not heal: what a noisy shared machine cannot excuse), GATE=none
reports only."""

from __future__ import annotations

from pathlib import Path

from ... import tools
from . import failed, load

MODES = ("all", "data", "none")
# As k6 exits when a threshold is crossed: a run that worked, whose verdict did not pass its gate.
FAILED = 99


def lines(verdict: dict) -> list[str]:
    """The verdict in a few lines for the terminal: title, answer, every row that failed."""
    out = [f"verdict: {verdict['title']}", f"  {verdict['answer']}"]
    for r in verdict["rows"]:
        if r["status"] == "fail":
            gates = "not gated" if r["gate"] == "none" else f"gates {r['gate']}"
            out.append(f"  FAILED ({gates}) {r['check']}: {r['observed']} (target: {r['target']})")
    return out


def exit_code(verdict: dict, mode: str) -> int:
    return FAILED if failed(verdict["rows"], mode) else 0


def judge(run_dir: Path, mode: str) -> int:
    """Prints the run's verdict (verdict.json, which the report wrote) and returns the gate's exit
    code: FAILED when a row the mode gates failed, else 0."""
    verdict = load(run_dir)
    if verdict is None:
        print(f"verdict: {tools.rel(run_dir)} has no verdict.json (write its report: python -m lab report)")
        return 0 if mode == "none" else 1
    print("\n".join(lines(verdict)))
    bad = failed(verdict["rows"], mode)
    if mode == "none":
        print(f"gate none: the verdict {'passed' if verdict['passed'] else 'failed'}; reporting only")
    elif bad:
        gates = sorted({r["gate"] for r in bad})
        print(
            f"gate {mode}: FAILED, {len(bad)} row{'s' if len(bad) != 1 else ''} that gate{'s' if len(bad) == 1 else ''} "
            f"{' and '.join(gates)} failed; see {tools.rel(Path(run_dir) / 'report.html')} "
            "(GATE=data or --gate data: only the data rows; GATE=none: report only)"
        )
    else:
        print(f"gate {mode}: passed")
    return exit_code(verdict, mode)
