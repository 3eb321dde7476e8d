"""Checks that a run's report has every part a report must have (the CI smoke run uses it).

    python -m lab check RUN_DIR

A report has: a title that names the configuration (nodes, replicas, tool, rate) and, under it,
a verdict box with a row per measured fixed-rate phase and, when a saturation search ran, the
highest rate it sustained; the command that started it and the exact load and profiler commands;
the environment; findings and a conclusion section; per measured phase the requested and achieved
rate, a percentile table from 50 % to 100 %, a percentile-spectrum plot and flame graphs that were
really written; a time-series figure for every phase that recorded a time series; the saturation
curve when a search ran; when the nodes' healing counters were read, a healing table with a row per
phase, and for an outage phase hints written and replayed and a cluster that healed; a comparison
section; and a self-contained report.html, the Markdown rendered, with the plots embedded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .report import runs, timeline, views
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
    run = json.loads((run_dir / "run.json").read_text())

    for section in SECTIONS:
        if section not in md:
            found.append(f"report.md has no '{section}' section")
    if "## Comparison with" not in md:
        found.append("report.md has no comparison section")
    if "Started with: `" not in md:
        found.append("report.md does not say which command started the run")
    commands = re.search(r"## Commands\n(.*?)\n## ", md, re.S)
    if not commands or ("k6 run" not in commands.group(1) and "wrk " not in commands.group(1)):
        found.append("report.md lists no load command")
    if expects_profiles(run) and "profile.sh" not in md:
        found.append("report.md lists no profiler command")

    measured = [p for p in run.get("phases", []) if is_measured(p)]
    if not measured:
        found.append("the run has no measured phase")
    for phase in measured:
        label = phase.get("label", "?")
        if not re.search(rf"### {re.escape(label)}\n.*?Requested \*\*.*?achieved \*\*", md, re.S):
            found.append(f"phase {label}: no requested and achieved rate")
    # Local nodes are processes whose threads and JVM counters the lab reads; pods in Kubernetes are not.
    if run.get("executor") == "local" and md.count("| threads | CPU, cores |") < len(measured):
        found.append("report.md lacks the table of the nodes' threads for a measured phase")
    if run.get("executor") == "local" and md.count("| node | safepoints |") < len(measured):
        found.append("report.md lacks the table of the nodes' JVM pauses for a measured phase")
    if md.count(PERCENTILE_HEADER) < len(measured):
        found.append(f"{md.count(PERCENTILE_HEADER)} percentile tables for {len(measured)} measured phases")
    for plot in re.findall(r"!\[[^]]*\]\((plots/[^)]+)\)", md):
        if not (run_dir / plot).is_file():
            found.append(f"plot {plot} is missing")
    if not re.search(r"!\[[^]]*spectrum[^]]*\]\(plots/", md):
        found.append("report.md has no percentile-spectrum plot")

    flame_graphs = re.findall(r"\]\((phases/[^)]+/profiles/[^)]+\.html)\)", md)
    if expects_profiles(run) and not flame_graphs:
        found.append("report.md links no flame graph")
    for graph in flame_graphs:
        path = run_dir / graph
        if not path.is_file() or path.stat().st_size < 1000 or "<html" not in path.read_text(errors="replace")[:2000].lower():
            found.append(f"flame graph {graph} is missing or not an HTML flame graph")

    found.extend(headline_problems(run, md, html))
    found.extend(figure_problems(run_dir, run, md))
    found.extend(healing_problems(run, md))
    found.extend(scale_problems(run_dir, run, md))
    found.extend(soak_problems(run_dir, run, md))

    if re.search(r"<(img|script|link)[^>]+(src|href)=\"https?://", html):
        found.append("report.html loads something from the network: it is not self-contained")
    if "data:image/png;base64," not in html:
        found.append("report.html embeds no plot")
    if re.search(r"\bsrc=\"plots/", html):
        found.append("report.html links a plot instead of embedding it")
    text = re.sub(r"<(pre|code)>.*?</\1>", "", html, flags=re.S)
    if "| --- |" in text or re.search(r"\*\*[^*<>\n]+\*\*", text):
        found.append("report.html shows Markdown unrendered (a table or **bold** as text)")
    return found


TITLE = re.compile(
    r"\A# kvlab(?: on Kubernetes)?: (\d+) (?:node|pod)s?, replicas (\d+/\d+), "
    r"((?:k6|wrk2?)(?: and (?:k6|wrk2?))*)(?: at (.+)/s|, (.+) \(saturation search\))\n"
)


def headline_problems(run: dict, md: str, html: str) -> list[str]:
    """The title names the configuration; the verdict box opens the report with a row per measured
    fixed-rate phase, and the highest sustained rate when a search ran."""
    if run.get("kind") == "hotpath":
        named = md.startswith("# kvlab hot path: ")
        return [] if named else ["report.md's title does not name the hot-path configuration"]
    if run.get("kind") == "scale":
        named = re.match(r"# kvlab scale: 1 node, .+ keys of \d+ bytes, .+ at .+/s, memory limit .+ \((not )?enforced\)\n", md)
        return [] if named else ["report.md's title does not name the scale configuration"]
    found = []
    title = TITLE.match(md)
    if not title:
        found.append("report.md's title does not name the configuration (nodes, replicas, tool, rate)")
    else:
        if int(title.group(1)) != runs.node_count(run):
            found.append(f"the title says {title.group(1)} nodes, the run had {runs.node_count(run)}")
        if title.group(2) != runs.replicas(run):
            found.append(f"the title says replicas {title.group(2)}, the run used {runs.replicas(run)}")
    box = re.search(r'<div class="verdict" markdown="1">\n(.*?)\n</div>', md, re.S)
    if not box or md.find("## ") < box.start():
        return found + ["report.md does not open with a verdict box"]
    for phase in run.get("phases", []):
        if is_measured(phase) and not views.is_step(run, phase) and f"\n| {phase['label']}" not in box.group(1):
            found.append(f"the verdict box has no row for phase {phase['label']}")
    sat = run.get("saturation")
    answer = re.search(r"Highest rate sustained within the SLO|No rate tried was sustained", box.group(1))
    if sat and sat.get("steps") and not answer:
        found.append("the verdict box does not say the highest rate the saturation search sustained")
    if '<div class="verdict">' not in html:
        found.append("report.html has no verdict box")
    return found


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


SCALE_TARGETS = ("GET p99 at the largest size", "fill at ", "the node survived")
SCALE_TABLES = (
    "| keys | fill, keys/s | fill, s | failed PUTs | settle, s | write ampl. (process) |",
    "| keys | status p50 | status p99 | status µs | GET achieved/s | GET p50 | GET p99 | GET µs | GET vs status |",
    "| keys | heap used | heap max | RSS | cgroup current | cgroup peak | OOM kills | data-block hit rate |",
    "| keys | block-cache-usage |",
)
SCALE_PLOTS = ("fill rate", "GET and PUT latency", "server CPU per request", "the node's memory", "disk use",
               "write amplification", "block-cache hit rates")


def scale_problems(run_dir: Path, run: dict, md: str) -> list[str]:
    """A scale run's report: the targets in the verdict box, the memory limit, JVM options and node
    command, a row per size in each of its tables, and each of its figures drawn."""
    if run.get("kind") != "scale":
        return []
    scale = run.get("scale") or {}
    box = re.search(r'<div class="verdict" markdown="1">\n(.*?)\n</div>', md, re.S)
    found = [f"the verdict box lacks the scale target '{t}...'" for t in SCALE_TARGETS if not box or f"| {t}" not in box.group(1)]
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
        m = re.search(rf"!\[scale: {re.escape(title)}[^]]*\]\((plots/[^)]+)\)", text)
        if not m or not (run_dir / m.group(1)).is_file():
            found.append(f"the scale section has no figure of {title}")
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
    """The healing table, when the run read the nodes' counters; and that an outage healed."""
    found = []
    phases = [p for p in run.get("phases", []) if p.get("healing")]
    if not phases:
        return found
    table = re.search(r"## Healing\n(.*?)\n## ", md, re.S)
    if not table or "| phase | hints written | hints replayed |" not in table.group(1):
        return ["report.md has no healing table, though the run read the nodes' healing counters"]
    for p in phases:
        if f"\n| {p['label']} | " not in table.group(1):
            found.append(f"the healing table has no row for phase {p['label']}")
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


def main(run_dir: Path) -> int:
    found = problems(run_dir)
    for p in found:
        print(f"report check: {p}")
    print(f"report check: {run_dir}: {'whole' if not found else f'{len(found)} problem(s)'}")
    return 1 if found else 0
