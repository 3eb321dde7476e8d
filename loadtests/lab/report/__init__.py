"""The report generator: a run directory (run.json, env.json, the phases' results, time series and
flame graphs) becomes report.md and a self-contained report.html, with a comparison against a
previous run.

    python -m lab report reports/<run> [--compare reports/<other run>]

Its parts: build (the whole report), runs (reading run directories, what differs between two),
views (a phase's records as the template shows them), headline (the title and the verdict box),
findings (the numbers in words), timeline (a phase's time series and faults), flames and flamediff
(flame graphs), plots (the figures), render (one Markdown structure, two files). Only build loads
matplotlib.
"""

from __future__ import annotations

from pathlib import Path

from .views import TABLE  # noqa: F401 - the percentiles a report tabulates, for whoever produces them


def generate(run_dir: Path, compare: Path | None = None) -> tuple[Path, Path]:
    """Writes the run's report.md and report.html (and their plots), compared with the run given or
    the previous one next to it."""
    from . import build  # matplotlib loads only when a report is written, not for `lab check`

    return build.generate(run_dir, compare)
