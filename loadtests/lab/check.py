"""Checks that a run's report has every part a report must have (the CI smoke run uses it).

    python -m lab check RUN_DIR

A report has: a title of its kind of run that names the configuration (nodes, replicas, tool, rate)
and, right under it, the verdict box: the run's question and answer, a row for everything its kind
is judged on and k6's thresholds, as verdict.json beside it says (lab.checkverdict); a table of
contents whose links lead to the page's headings; the command that started it and the exact load
and profiler commands; the environment; findings and a conclusion section; per measured phase the
requested and achieved rate, a percentile table from 50 % to 100 %, a percentile-spectrum plot and
flame graphs that were really written, and no differential graph the report does not link; a
time-series figure for every phase that recorded a time series; the saturation curve when a search
ran; when the healing counters of two nodes or more were read, a healing table with a row per phase
(or the line that says no phase needed healing), and for an outage phase hints written and replayed
and a cluster that healed; for every phase that broke something, a ledger that read every
acknowledged write back and lost none; a comparison section; and a self-contained report.html, the Markdown
rendered (no list left as text), with the plots embedded.

It also checks the conclusion (conclusion.md, and the lab's draft conclusion.draft.md) against the run's
data (lab.conclusions.verify): its warnings fail the check only with --strict.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import checkverdict, healing
from .conclusions import verify
from .report import flames, ledgerview, runs, timeline, views
from .results import is_measured

PERCENTILE_HEADER = "| 50% | 75% | 90% | 99% | 99.9% | 99.99% | 99.999% | 100% |"
SECTIONS = ["## Findings", "## Conclusion", "## Environment", "## Commands", "## Phases"]


def expects_profiles(run: dict) -> bool:
    """Whether the run profiled a phase: it had profiler events and a measured phase that is profiled
    (a phase with faults is not: a paused or killed JVM cannot be attached to; nor are the steps of
    the short search that ends a fixed-rate run)."""
    if not run.get("config", {}).get("events"):
        return False
    return any(
        is_measured(p)
        and not (p.get("fault") or p.get("faults"))
        and not (p.get("saturation_step") and run.get("kind") == "phases")
        for p in run.get("phases", [])
    )


def problems(run_dir: Path) -> list[str]:
    """What is missing or broken in the run's report; empty when it is whole."""
    found: list[str] = []
    md_path, html_path = run_dir / "report.md", run_dir / "report.html"
    if not md_path.exists() or not html_path.exists():
        return [f"{run_dir} has no report.md and report.html"]
    md, html = md_path.read_text(), html_path.read_text()
    run = runs.load_run(run_dir)

    for section in SECTIONS:
        if section not in md:
            found.append(f"report.md has no '{section}' section")
    if "## Comparison with" not in md:
        found.append("report.md has no comparison section")
    if "Started with: `" not in md:
        found.append("report.md does not say which command started the run")
    # The large-reads benchmark drives its burst from the lab's own threads: no k6 or wrk phase,
    # no spectrum; its section holds its figures.
    phaseless = run.get("kind") == "largereads"
    if phaseless and "## Large reads: the burst" not in md:
        found.append("report.md has no section of the large reads' burst")
    commands = re.search(r"## Commands\n(.*?)\n## ", md, re.S)
    if not phaseless and (not commands or ("k6 run" not in commands.group(1) and "wrk " not in commands.group(1))):
        found.append("report.md lists no load command")
    if expects_profiles(run) and "profile.sh" not in md:
        found.append("report.md lists no profiler command")

    measured = [p for p in run.get("phases", []) if is_measured(p)]
    if not measured and not phaseless:
        found.append("the run has no measured phase")
    for phase in measured:
        label = phase.get("label", "?")
        if not re.search(rf"### {re.escape(label)}\n.*?Requested \*\*.*?achieved \*\*", md, re.S):
            found.append(f"phase {label}: no requested and achieved rate")
    # Local nodes are processes whose threads and JVM counters the lab reads; pods in Kubernetes are not.
    if run.get("executor") == "local" and md.count("| threads | CPU, cores |") < len(measured):
        found.append("report.md lacks the table of the nodes' threads for a measured phase")
    pauses = md.count("| node | safepoints |") + md.count("No node's JVM stopped for a safepoint in this phase.")
    if run.get("executor") == "local" and pauses < len(measured):
        found.append("report.md lacks the table of the nodes' JVM pauses for a measured phase")
    if md.count(PERCENTILE_HEADER) < len(measured):
        found.append(f"{md.count(PERCENTILE_HEADER)} percentile tables for {len(measured)} measured phases")
    for plot in re.findall(r"!\[[^]]*\]\((plots/[^)]+)\)", md):
        if not (run_dir / plot).is_file():
            found.append(f"plot {plot} is missing")
    if not phaseless and not re.search(r"!\[[^]]*spectrum[^]]*\]\(plots/", md):
        found.append("report.md has no percentile-spectrum plot")

    flame_graphs = re.findall(r"\]\((phases/[^)]+/profiles/[^)]+\.html)\)", md)
    if expects_profiles(run) and not flame_graphs and not re.search(r"The lock graphs? of .+ not listed", md):
        found.append("report.md links no flame graph")
    for diff in sorted(run_dir.glob(f"phases/*/profiles/*{flames.DIFF_SUFFIX}")):
        if diff.relative_to(run_dir).as_posix() not in flame_graphs:
            found.append(f"differential graph {diff.relative_to(run_dir)} is not linked from the report")
    for graph in flame_graphs:
        path = run_dir / graph
        if not path.is_file() or path.stat().st_size < 1000 or "<html" not in path.read_text(errors="replace")[:2000].lower():
            found.append(f"flame graph {graph} is missing or not an HTML flame graph")

    found.extend(checkverdict.problems(run_dir, run, md, html))
    found.extend(contents_problems(md, html))
    found.extend(figure_problems(run_dir, run, md))
    found.extend(healing_problems(run, md))
    found.extend(ledgerview.problems(run, md))
    found.extend(scale_problems(run_dir, run, md))
    found.extend(soak_problems(run_dir, run, md))

    if re.search(r"<(img|script|link)[^>]+(src|href)=\"https?://", html):
        found.append("report.html loads something from the network: it is not self-contained")
    if not phaseless and "data:image/png;base64," not in html:
        found.append("report.html embeds no plot")
    if re.search(r"\bsrc=\"plots/", html):
        found.append("report.html links a plot instead of embedding it")
    text = re.sub(r"<(pre|code)>.*?</\1>", "", html, flags=re.S)
    if "| --- |" in text or re.search(r"\*\*[^*<>\n]+\*\*", text):
        found.append("report.html shows Markdown unrendered (a table or **bold** as text)")
    if any(re.search(r"\n\s*[-*+] \S", p) for p in re.findall(r"<p>(.*?)</p>", html, re.S)):
        found.append("report.html shows a list as text: a paragraph with \" - \" items")
    return found


def contents_problems(md: str, html: str) -> list[str]:
    """A table of contents after the verdict box, each of its links an id of the page."""
    box = re.search(r'<div class="contents" markdown="1">\n(.*?)\n</div>', md, re.S)
    if not box:
        return ["report.md has no table of contents"]
    ids = set(re.findall(r' id="([^"]+)"', html))
    links = re.findall(r"\]\(#([^)]+)\)", box.group(1))
    return [f"the table of contents links #{a}, which the page does not have" for a in links if a not in ids]


def figure_problems(run_dir: Path, run: dict, md: str) -> list[str]:
    """A time-series figure for every measured phase with a time series (a warm-up has none); the
    saturation curve for a search."""
    found = []
    for phase in run.get("phases", []):
        if phase.get("warmup") or not timeline.load(run_dir, phase):
            continue
        plot = f"plots/timeseries-{phase['dir'].split('/')[-1]}.png"
        if f"]({plot})" not in md or not (run_dir / plot).is_file():
            found.append(f"phase {phase['label']} has a time series but no time-series figure")
    sat = run.get("saturation")
    curve = "](plots/saturation.png)" in md and (run_dir / "plots/saturation.png").is_file()
    if sat and sat.get("steps") and not curve:
        found.append("a saturation search ran but the report has no saturation curve")
    return found


SCALE_TABLES = (
    "| keys | fill, keys/s | fill, s | failed PUTs | settle, s | write ampl. (process) |",
    "| keys | status p50 | status p99 | status µs | GET achieved/s | GET p50 | GET p99 | GET µs | GET vs status |",
    "| keys | heap used | heap max | RSS | cgroup current | cgroup peak | OOM kills | data-block hit rate |",
    "| keys | block-cache-usage |",
)
SCALE_PLOTS = ("fill rate", "GET and PUT latency", "server CPU per request", "the node's memory", "disk use",
               "write amplification", "block-cache hit rates")


def scale_problems(run_dir: Path, run: dict, md: str) -> list[str]:
    """A scale run's report: the memory limit, JVM options and node command, a row per size in
    each of its tables, and each of its figures drawn."""
    if run.get("kind") != "scale":
        return []
    scale = run.get("scale") or {}
    found = []
    section = re.search(r"\n## Scale\n(.*?)\n## ", md, re.S)
    if not section:
        return found + ["report.md has no scale section"]
    text = section.group(1)
    for what in ("- Memory limit: **", "- Java options: `", "- Node: `"):
        if what not in text:
            found.append(f"the scale section does not state '{what.strip('-*` ')}'")
    for header in SCALE_TABLES:
        table = text.partition(header)[2].partition("\n\n")[0]
        if not table:
            found.append(f"the scale section lacks the table '{header[:40]}...'")
            continue
        for step in scale.get("steps", []):
            keys = f"{step['keys']:,}".replace(",", " ")
            if f"\n| {keys} |" not in "\n" + table:
                found.append(f"the scale table '{header[:30]}...' has no row for {step['keys']} keys")
    for title in SCALE_PLOTS:
        m = re.search(rf"!\[scale: {re.escape(title)}[^]]*\]\((plots/[^)]+)\)", md)
        if not m or not (run_dir / m.group(1)).is_file():
            found.append(f"the report has no scale figure of {title}")
    if not scale.get("steps"):
        found.append("the scale run measured no size")
    return found


SOAK_FIGURES = ("p99", "RSS", "heap after GC", "open files", "RocksDB disk (SST files)", "pending compaction")


def soak_problems(run_dir: Path, run: dict, md: str) -> list[str]:
    """A soak that ran: its drift section, a row and a figure per quantity."""
    if run.get("kind") != "soak" or not (run.get("soak") or {}).get("rate"):
        return []
    section = re.search(r"\n## Soak: drift over .*?\n(.*?)\n## ", md, re.S)
    if not section:
        return ["the soak's report has no drift section"]
    found = []
    for what in SOAK_FIGURES:
        if f"\n| {what} | " not in section.group(1):
            found.append(f"the soak's drift table has no row of {what}")
        m = re.search(rf"!\[{re.escape(what)} over the soak\]\((plots/[^)]+)\)", section.group(1))
        if not m or not (run_dir / m.group(1)).is_file():
            found.append(f"the soak's report has no figure of {what}")
    return found


def healing_problems(run: dict, md: str) -> list[str]:
    """The healing table, when the run read the counters of two nodes or more and a phase needed
    healing (else the line that says none did); and that an outage healed."""
    found = []
    phases = [p for p in run.get("phases", []) if views.heals(p)]
    if not phases:
        return found
    section = re.search(r"## Healing\n(.*?)\n## ", md, re.S)
    text = section.group(1) if section else ""
    if not any(healing.anything(p["healing"]) for p in phases):
        if "No phase needed healing" not in text:
            found.append("report.md does not say that no phase needed healing, though it read the healing counters")
    elif "| phase | hints written | hints replayed |" not in text:
        found.append("report.md has no healing table, though a phase needed healing")
    else:
        missing = [p["label"] for p in phases if f"\n| {p['label']} | " not in text]
        found.extend(f"the healing table has no row for phase {label}" for label in missing)
    for p in run.get("phases", []):
        if not p.get("fault"):
            continue
        label, t = p["label"], (p.get("healing") or {}).get("total", {})
        if p["fault"].get("began_at_s") is None or p["fault"].get("ended_at_s") is None:
            found.append(f"phase {label}: node {p['fault'].get('node')} was not frozen and let go: {p['fault'].get('error')}")
        if not t.get("hints_written"):
            found.append(f"phase {label}: no hint was written while a node was frozen")
        if not t.get("hints_replayed"):
            found.append(f"phase {label}: no hint was replayed once the node went on")
        if t.get("hints_pending"):
            found.append(f"phase {label}: {t['hints_pending']:.0f} hints still pending at its end")
        if not (p.get("heal") or {}).get("healed"):
            found.append(f"phase {label}: the cluster did not heal: {(p.get('heal') or {}).get('why') or 'not waited for'}")
    return found


def main(run_dir: Path, strict: bool = False) -> int:
    """Prints what is missing from the report and the warnings on its conclusion; 1 when something is
    missing, or with strict when the conclusion or its draft has a warning."""
    found = problems(run_dir)
    for p in found:
        print(f"report check: {p}")
    warned = verify.warnings(run_dir)
    for w in warned:
        print(f"conclusion check: {w}")
    print(f"report check: {run_dir}: {'whole' if not found else f'{len(found)} problem(s)'}"
          + (f"; {len(warned)} warning(s) on the conclusion" + (" (strict: a failure)" if strict else "") if warned else ""))
    return 1 if found or (strict and warned) else 0
