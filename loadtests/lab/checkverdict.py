"""The check of a report's first screen (part of `python -m lab check`): a title of its kind that
names the configuration; right under it the verdict box, with the question, the answer, a row for
everything the kind of run is judged on (each fixed-rate phase, each fault, each operation and
rate of the hot path, each size of the scale run, the search's answer) and k6's thresholds; and
verdict.json beside the report, agreeing with the box and with the run's data."""

from __future__ import annotations

import re

from .report import fmt, runs, timeline, verdicts
from .report.verdicts import faults, hotpath, phases

TOOLS = r"((?:k6|wrk2?)(?: and (?:k6|wrk2?))*)"
CLUSTER = r"(\d+) (?:node|pod)s?, replicas (\d+/\d+), " + TOOLS
TITLES = {
    "lab": re.compile(rf"# kvlab fixed-rate phases(?: on Kubernetes)?: {CLUSTER} at .+/s"),
    "saturation": re.compile(rf"# kvlab saturation search(?: on Kubernetes)?: {CLUSTER}, \w+ from .+/s up"),
    "faults": re.compile(rf"# kvlab fault scenario(?: on Kubernetes)?: {CLUSTER} at .+/s(?:; .+)?"),
    "disaster": re.compile(
        rf"# kvlab disaster scenario(?: on Kubernetes)?: {CLUSTER} at .+/s; backup to .+, every node's data destroyed, restored"
    ),
    "hotpath": re.compile(r"# kvlab hot path: 1 node, " + TOOLS + r", GET at .+/s and PUT at .+/s"),
    "scale": re.compile(r"# kvlab scale: 1 node, .+ keys of \d+ bytes, .+ at .+/s, memory limit .+ \((not )?enforced\)"),
}
BOX = re.compile(r'\A# [^\n]*\n\n<div class="verdict" markdown="1">\n(.*?)\n</div>\n', re.S)
CELL = re.compile(r"(?<!\\)\|")


def title_problems(run: dict, kind: str, title: str) -> list[str]:
    """The title names the kind of run and its configuration: nodes, replicas, tools and rates."""
    pattern = TITLES.get(kind)
    if pattern is None:
        return [] if title.startswith("# kvlab ") else [f"report.md's title does not name kvlab: {title}"]
    m = pattern.fullmatch(title)
    if not m:
        return [f"report.md's title is not one of a {kind} run that names its configuration: {title}"]
    if kind not in ("lab", "saturation", "faults", "disaster"):
        return []
    found = []
    if int(m.group(1)) != runs.node_count(run):
        found.append(f"the title says {m.group(1)} nodes, the run had {runs.node_count(run)}")
    if m.group(2) != runs.replicas(run):
        found.append(f"the title says replicas {m.group(2)}, the run used {runs.replicas(run)}")
    return found


def expected_checks(run: dict, kind: str) -> list[str]:
    """The rows (their first cell, or its start) a kind's verdict must have, from the run's data."""
    out = []
    if kind in ("lab", "faults"):
        out += [p["label"] for p in phases.fixed_rate(run)]
        for p in run.get("phases", []):
            if phases.has_faults(p) and not p.get("warmup"):
                out += [f"{p['label']}: {f.get('node')} {faults.VERBS.get(f.get('kind'))}" for f in timeline.faults(p)]
                out += [f"{p['label']}: the cluster healed", f"{p['label']}: acknowledged writes lost"]
    if kind in ("lab", "saturation") and (run.get("saturation") or {}).get("steps"):
        out.append("highest rate sustained within the SLO")
    if kind == "disaster":
        out += ["writes acknowledged before the backup began, missing after the restore", "backup under load"]
        if any((p.get("backup") or {}).get("answer") for p in run.get("phases", [])):
            out += ["restore took", "p99 during the backup against before it", "written after the backup began"]
    if kind == "hotpath":
        out += [f"{hotpath.what(r)}: server CPU per request" for _, r in hotpath.pairs(run)]
    if kind == "scale":
        out += [f"{fmt.rate(s['keys'])} keys" for s in (run.get("scale") or {}).get("steps", [])]
        out.append("the node survived")
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in CELL.split(line.strip())[1:-1]]


def result_cell(r: dict) -> str:
    """A row's result as the box shows it."""
    if r["status"] != "fail":
        return {"pass": "pass", "info": "–"}[r["status"]]
    return "**fail**" if r["gate"] != "none" else "fail, not gated"


def box_problems(verdict: dict, box: str) -> list[str]:
    """The box shows verdict.json: its question, its answer with passed or failed, each row as it
    is, and each k6 threshold."""
    found = []
    if f"**{verdict['question']}**" not in box:
        found.append("the verdict box does not ask verdict.json's question")
    if f"**{'Passed' if verdict['passed'] else 'Failed'}.** {verdict['answer']}" not in box:
        found.append("the verdict box does not give verdict.json's answer and whether it passed")
    shown = [_cells(line) for line in box.splitlines() if line.startswith("| ")]
    for r in verdict["rows"]:
        want = [fmt.md_text(r["check"]), fmt.md_text(r["observed"]), fmt.md_text(r["target"]), result_cell(r)]
        if not any(cells[:4] == want for cells in shown):
            found.append(f"the verdict box does not show verdict.json's row '{r['check']}' as it is")
    for t in verdict.get("thresholds") or []:
        if not any(cells[:3] == [fmt.md_text(t["phase"]), f"`{t['threshold']}`", t["observed"]] for cells in shown):
            found.append(f"the verdict box lacks k6's threshold {t['threshold']} of phase {t['phase']}")
    return found


def problems(run_dir, run: dict, md: str, html: str) -> list[str]:
    kind = verdicts.kind_of(run)
    title = md.split("\n", 1)[0]
    found = title_problems(run, kind, title)
    box = BOX.match(md)
    if not box:
        return found + ["report.md does not open with a verdict box right under its title"]
    if '<div class="verdict">' not in html:
        found.append("report.html has no verdict box")
    verdict = verdicts.load(run_dir)
    if verdict is None:
        return found + ["the run has no verdict.json beside its report"]
    if title != f"# {verdict['title']}":
        found.append("report.md's title is not verdict.json's")
    if verdict != verdicts.build(run):
        found.append("verdict.json does not agree with the run's data: write the report again")
    checks = [r["check"] for r in verdict["rows"]]
    for want in expected_checks(run, kind):
        if not any(c == want or c.startswith(want) for c in checks):
            found.append(f"the verdict has no row for {want}")
    return found + box_problems(verdict, box.group(1))
