"""`lab check`'s part on conclusions: every number of conclusion.md (and of the draft) that is nowhere
in the run's data, every claim the data contradicts, and development history, as warnings.

The run's data: run.json, env.json, verdict.json, the phases' result.json and timeseries.json, the
rendered report.md without its conclusion, and what a writer works out from them (the durations the
timestamps give, failed requests, a node's mean GC pause, a profiler window's end). A sentence that links another run's report
("[the 40 000-key run](../<run>/report.md)") speaks of that run: its numbers may come from it, and
its claims are tested against it."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from ..report import runs
from . import claims, facts, files, numbers
from . import text as cut
from .scope import Scope

LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def _seconds(a: str | None, b: str | None) -> list[float]:
    try:
        return [(datetime.strptime(b, "%Y-%m-%dT%H:%M:%S%z") - datetime.strptime(a, "%Y-%m-%dT%H:%M:%S%z")).total_seconds()]
    except (TypeError, ValueError):
        return []


def derived(run: dict) -> numbers.Values:
    """Figures a writer works out from the data: durations, failed requests, the data's size, counts,
    mean GC pauses, the ends of profiler windows."""
    cfg = run.get("config", {})
    out: numbers.Values = [(s, "s") for s in _seconds(run.get("started"), run.get("finished"))]
    counts = [runs.node_count(run), len(run.get("phases", [])), sum(1 for p in run.get("phases", []) if p.get("warmup"))]
    out += [(n, "count") for n in counts]
    if cfg.get("keys") and cfg.get("value_size"):
        out.append((cfg["keys"] * cfg["value_size"], "bytes"))
    for p in run.get("phases", []):
        r = p.get("result") or {}
        out += [(s, "s") for s in _seconds(p.get("started"), p.get("finished"))]
        if r.get("requests") is not None:
            out.append((round(r["requests"] * (r.get("error_rate") or 0)), "count"))
        for pauses in (p.get("cpu") or {}).get("jvm_pauses", {}).values():
            if pauses.get("gc_pauses"):
                out.append((pauses["gc_s"] * 1e3 / pauses["gc_pauses"], "ms"))
        out += [(w["offset_s"] + w["seconds"], "s") for w in p.get("profiles", []) if w.get("offset_s") is not None and w.get("seconds")]
    for step in (run.get("scale") or {}).get("steps", []):
        out.append((step.get("keys", 0) * (run.get("scale") or {}).get("value_size", 0), "bytes"))
    return out


def report_text(run_dir: Path) -> str:
    """report.md without its conclusion, which is what is being checked."""
    path = run_dir / "report.md"
    md = path.read_text() if path.exists() else ""
    return re.sub(r"\n## Conclusion\n.*?(?=\n## |\Z)", "\n", md, flags=re.S)


def index(run_dir: Path) -> numbers.Index:
    run = runs.load_run(run_dir)
    values = numbers.leaves({k: v for k, v in run.items() if k != "dir"}) + derived(run)
    values += numbers.leaves(numbers.json_file(run_dir / "verdict.json"))
    for p in run.get("phases", []):
        for name in ("result.json", "timeseries.json"):
            values += numbers.leaves(numbers.json_file(run_dir / p.get("dir", "") / name))
    values += numbers.in_text(report_text(run_dir))
    return numbers.Index(values)


class Run:
    """A run directory as the checks read it."""

    def __init__(self, run_dir: Path):
        self.dir = run_dir
        self.doc = runs.load_run(run_dir)
        self.reader = claims.Reader(self.doc, Scope(facts.phases(self.doc, run_dir)))
        self._index: numbers.Index | None = None

    @property
    def index(self) -> numbers.Index:
        if self._index is None:
            self._index = index(self.dir)
        return self._index


def linked(raw: str, run_dir: Path, cache: dict[Path, Run]) -> Run | None:
    """The run a sentence's link points to (its directory or a file in it), when it is another run."""
    for m in LINK.finditer(raw):
        target = m.group("target").split("#")[0]
        if not target or "://" in target:
            continue
        path = (run_dir / target).resolve()
        path = path if path.is_dir() else path.parent
        if path != run_dir.resolve() and (path / "run.json").is_file():
            if path not in cache:
                cache[path] = Run(path)
            return cache[path]
    return None


def conclusion_warnings(markdown: str, run_dir: Path) -> list[str]:
    """The warnings on one conclusion's text of the run in run_dir."""
    this, others = Run(run_dir), {}
    found = [str(w) for w in claims.history(markdown)]
    for s in cut.sentences(markdown, numbers.prose):
        other = linked(s.raw, run_dir, others)
        found += [str(w) + (f" (in {other.dir.name}, which the sentence links)" if other else "")
                  for w in (other or this).reader.check(s)]
        for w in numbers.written(s.text):
            if w.bound or this.index.has(w) or (other and other.index.has(w)):
                continue
            where = " ".join(s.text[max(0, w.start - 40) : w.end + 30].split())
            found.append(f"{w.text}: nowhere in the run's data (“…{where}…”)")
    return found


def warnings(run_dir: Path) -> list[str]:
    """Every warning on the run's conclusion and on its draft, each prefixed with its file."""
    run_dir = Path(run_dir)
    out = []
    for path in files.conclusions(run_dir):
        out += [f"{path.name}: {w}" for w in conclusion_warnings(path.read_text(), run_dir)]
    return out
