"""A report's conclusion: drafted by the lab from the run's own data, edited by a person, and checked
against the data by `lab check`.

Its parts: facts (what the data says about each phase: rate, percentiles, SLO, flushes and
compactions, GC pauses, the worst second and what ran around it), words and drafts (the draft, one
function per kind of run), files (conclusion.draft.md, the lab's, beside conclusion.md, the
person's), and the checks: numbers (a number as a writer writes it, and whether the data holds it),
text and scope (clauses, and the phases they speak of), claims (what the data can contradict) and
verify (all of them over a run's conclusion files)."""

from __future__ import annotations

from pathlib import Path

from . import drafts, files


def write_draft(run_dir: Path, run: dict) -> Path:
    """Writes the run's draft conclusion (conclusion.draft.md) again from its data."""
    path = Path(run_dir) / files.DRAFT
    path.write_text(drafts.draft(run, Path(run_dir)))
    return path
