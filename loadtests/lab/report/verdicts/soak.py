"""The soak's verdict: did the cluster hold its rate within the SLO for the whole soak, and did its
latency, memory, open files and disk stay within their tolerances from the first window to the
last (lab.report.soakview computes the rows from the soak's drift); and the fill's row."""

from __future__ import annotations

from .. import soakview
from . import fill
from .rows import Part


def build(run: dict) -> Part:
    v = soakview.verdict(run)
    return Part(v["title"], v["question"], v["answer"], v["rows"] + fill.rows(run))
