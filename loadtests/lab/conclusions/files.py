"""Where a run's conclusion lives, so that a re-render never overwrites what a person wrote:

- conclusion.draft.md is the lab's: written again from the run's data at every render.
- conclusion.md is the person's: the lab never writes it. Copy the draft to it and edit.

The report shows conclusion.md when there is one and it differs from the draft; otherwise the
draft, marked as a draft."""

from __future__ import annotations

from pathlib import Path

DRAFT = "conclusion.draft.md"
WRITTEN = "conclusion.md"


def _same(a: str, b: str) -> bool:
    return a.split() == b.split()


def shown(run_dir: Path) -> tuple[str, bool]:
    """The conclusion the report shows, and whether it is still the lab's draft (no conclusion.md, or
    one copied from the draft and not edited)."""
    written, draft = run_dir / WRITTEN, run_dir / DRAFT
    draft_text = draft.read_text().strip() if draft.exists() else ""
    if written.exists():
        text = written.read_text().strip()
        return text, bool(draft_text) and _same(text, draft_text)
    return draft_text, bool(draft_text)


def conclusions(run_dir: Path) -> list[Path]:
    """The conclusion files the run has: the person's, then the draft."""
    return [p for p in (run_dir / WRITTEN, run_dir / DRAFT) if p.exists()]
