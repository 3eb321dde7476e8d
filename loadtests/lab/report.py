"""The report generator: a run directory (run.json, env.json, the phases' results and flame graphs)
becomes report.md and a self-contained report.html (plots embedded as PNG, flame graphs linked as
the sibling files they are), with a comparison against a previous report.

    python -m lab report reports/<run> [--compare reports/<other run>]
"""

from __future__ import annotations

import base64
import io
import json
import math
from pathlib import Path

import jinja2
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from . import flamegraph, healing, tools  # noqa: E402
from .results import is_measured, worst  # noqa: E402

TABLE = ["p50", "p75", "p90", "p99", "p99.9", "p99.99", "p99.999", "p100"]
KINDS = {"phases": "Fixed-rate phases", "saturation": "Saturation search", "hotpath": "Hot-path benchmark"}
TEMPLATES = Path(__file__).resolve().parent / "templates"


# ---------------------------------------------------------------------------------------- loading


def load_run(run_dir: Path) -> dict:
    doc = json.loads((run_dir / "run.json").read_text())
    env_path = run_dir / "env.json"
    doc["env"] = json.loads(env_path.read_text()) if env_path.exists() else {}
    doc["dir"] = str(run_dir)
    return doc


def previous_run(run_dir: Path, given: Path | None) -> Path | None:
    """The run given, else the newest older run next to this one on the same executor (a run in
    Kubernetes is not compared with one on local processes): one of the same name if there is one
    (the same experiment), else of the same kind, else any."""
    if given:
        given = Path(given)
        if given.name == "run.json":
            given = given.parent
        if not (given / "run.json").exists():
            raise SystemExit(f"no run.json in {given} to compare with")
        return given
    run_dir = run_dir.resolve()
    this = json.loads((run_dir / "run.json").read_text())
    older = []
    for d in sorted(run_dir.parent.iterdir()):
        if d.is_dir() and d != run_dir and d.name < run_dir.name and (d / "run.json").exists():
            try:
                older.append((d, json.loads((d / "run.json").read_text())))
            except (OSError, ValueError):
                continue
    executor = this.get("executor", "local")
    older = [(d, doc) for d, doc in older if doc.get("executor", "local") == executor]
    for wanted in (
        lambda doc: doc.get("name") == this.get("name") and doc.get("kind") == this.get("kind"),
        lambda doc: doc.get("kind") == this.get("kind"),
        lambda doc: True,
    ):
        matches = [d for d, doc in older if wanted(doc)]
        if matches:
            return matches[-1]
    return None


# ------------------------------------------------------------------------------------- formatting


def fmt_ms(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def fmt_rate(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:,.0f}".replace(",", " ")


def fmt_num(v, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.{digits}f}"


def fmt_pct(v, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v * 100:.{digits}f}%"


def fmt_delta(this, prev) -> str:
    if this is None or prev is None or not prev or any(isinstance(x, float) and math.isnan(x) for x in (this, prev)):
        return "–"
    return f"{(this - prev) / prev * 100:+.1f}%"


# ------------------------------------------------------------------------------------------ plots

PERCENTILE_TICKS = [1, 2, 10, 100, 1_000, 10_000, 100_000]
PERCENTILE_LABELS = ["0%", "50%", "90%", "99%", "99.9%", "99.99%", "99.999%"]


def _spectrum_xy(spectrum):
    xs, ys = [], []
    for p, v in spectrum:
        if v is None or p >= 1:
            continue
        xs.append(1 / (1 - p))
        ys.append(v)
    return xs, ys


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def spectrum_plot(title: str, series: list[tuple[str, list, dict]]) -> bytes:
    """HdrHistogram's percentile spectrum: latency against 1/(1-p) on a log axis.
    series: (label, spectrum [[p, ms], ...], matplotlib style)."""
    fig, ax = plt.subplots(figsize=(8.5, 4.2), dpi=100)
    top = 0.0
    bottom = math.inf
    for label, spectrum, style in series:
        xs, ys = _spectrum_xy(spectrum)
        if xs:
            ax.plot(xs, ys, label=label, **style)
            top = max(top, max(ys))
            bottom = min(bottom, min(y for y in ys if y > 0) if any(y > 0 for y in ys) else math.inf)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(PERCENTILE_TICKS))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda x, _: PERCENTILE_LABELS[PERCENTILE_TICKS.index(x)] if x in PERCENTILE_TICKS else "")
    )
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(1, 100_000)
    # Tails often reach 100x the median: a log latency axis keeps the median readable then.
    if bottom < math.inf and top / bottom > 100:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.set_ylabel("latency, ms (log scale)")
    else:
        ax.set_ylim(bottom=0)
        ax.set_ylabel("latency, ms")
    ax.set_xlabel("percentile")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return _png(fig)


def saturation_plot(steps: list[dict], slo_ms: float) -> bytes:
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8), dpi=100)
    rates = [s["rate"] for s in steps]
    a1.plot(rates, [s["achieved_rate"] for s in steps], "o-", label="achieved")
    a1.plot(rates, rates, "--", color="gray", label="requested")
    a1.set_xlabel("requested rate, req/s")
    a1.set_ylabel("achieved rate, req/s")
    a1.grid(True, alpha=0.3)
    a1.legend(fontsize=8)
    a2.plot(rates, [s["p99_ms"] for s in steps], "o-", color="tab:red", label="p99")
    a2.axhline(slo_ms, color="gray", linestyle="--", label=f"SLO {slo_ms:g} ms")
    a2.set_xlabel("requested rate, req/s")
    a2.set_ylabel("p99 latency, ms")
    a2.grid(True, alpha=0.3)
    a2.legend(fontsize=8)
    fig.suptitle("saturation search")
    return _png(fig)


# ------------------------------------------------------------------------------------------ views


def _series(result: dict) -> list[tuple[str, dict]]:
    """The latency series to show: the phase's own (all requests, or one per operation), then each
    target's when one load generator per target sent the load."""
    shown = result.get("latency", {}) | result.get("latency_by_target", {})
    return [(name, s) for name, s in shown.items() if s]


def slo_p99(result: dict) -> float | None:
    """The p99 the SLO is held to: of the phase's own series (all requests, or the worst
    operation), never of one target's share of them."""
    p99 = worst(result, "p99") if result.get("latency") else math.nan
    return None if math.isnan(p99) else p99


HOT_EVENTS = ("cpu", "itimer", "ctimer", "alloc")


def hot_frames(graph: Path, event: str) -> dict | None:
    """The hottest frames of a CPU or allocation flame graph, names without their Java package;
    None for other events (wall and lock graphs are mostly threads waiting) or a graph that
    cannot be read."""
    if event not in HOT_EVENTS or not graph.is_file():
        return None
    try:
        hot = flamegraph.hottest(graph)
    except (OSError, ValueError, SyntaxError):
        return None
    short = [(name.rsplit("/", 1)[-1][:70], share) for name, share in hot["frames"]]
    text = ", ".join(f"`{name}` {share * 100:.1f} %" for name, share in short)
    return {"samples": hot["samples"], "frames": short, "text": text}


def healing_cells(v: dict) -> dict:
    """One row of a healing table: a node's figures over a phase, or the nodes' sum."""
    g = lambda k: v.get(k, 0.0)  # noqa: E731
    return {
        "written": g("hints_written"),
        "replayed": g("hints_replayed"),
        "dropped": g("hints_dropped"),
        "pending": g("hints_pending"),
        "rounds": g("repair_rounds"),
        "failed": g("repair_rounds_failed"),
        "keys": g("keys_compared"),
        "sent": g("repair_sent"),
        "received": g("repair_received"),
        "repaired": g("repair_sent") + g("repair_received"),
        "moved": g("records_moved"),
        "purged": g("tombstones_purged"),
        "previous_reads": g("previous_owner_reads"),
        "leaving": g("leaving"),
    }


def healing_view(phase: dict) -> dict | None:
    """What the nodes did to heal during the phase (lab.healing.delta in run.json), for the tables;
    None when the counters were not read."""
    h = phase.get("healing")
    if not h:
        return None
    fault = phase.get("fault")
    heal = phase.get("heal")
    text = short = ""
    if fault:
        t = healing_cells(h["total"])
        if fault.get("began_at_s") is not None:
            short = (
                f"{fault.get('what') or fault['kind'] + ' of node ' + fault['node']}: from second "
                f"{fault['began_at_s']:.1f} to {(fault.get('ended_at_s') or math.nan):.1f} of the load"
            )
        else:
            short = f"{fault['kind']} of node {fault['node']} did not happen: {fault.get('error') or 'the phase ended first'}"
        text = short
        text += (
            f"; its peers kept {fmt_rate(t['written'])} hints of the writes it missed"
            + (f" ({fmt_rate(t['dropped'])} more not kept)" if t["dropped"] else "")
            + f" and replayed {fmt_rate(t['replayed'])}"
        )
        if heal and heal.get("hints_replayed_s") is not None:
            text += f", all of them {heal['hints_replayed_s']:.1f} s after the load ended"
        if heal and heal.get("repaired_s") is not None:
            text += (
                f"; repair rounds between every two nodes then compared {fmt_rate(t['keys'])} keys one by one and "
                f"copied {fmt_rate(t['repaired'])} records ({fmt_rate(t['sent'])} sent, {fmt_rate(t['received'])} received)"
            )
        text += (
            ": the cluster healed" + (f" within {heal['repaired_s']:.0f} s of the load's end" if heal.get("repaired_s") else "")
            if heal and heal.get("healed")
            else f": the cluster had not healed when the lab stopped waiting ({(heal or {}).get('why') or 'not waited for'})"
        )
    return {
        "rows": [{"name": name, **healing_cells(v)} for name, v in h.get("nodes", {}).items()],
        "total": healing_cells(h.get("total", {})),
        "missing": h.get("missing", {}),
        "anything": healing.anything(h),
        "fault": fault,
        "heal": heal,
        "text": text,
        "short": short,
    }


def phase_view(run: dict, phase: dict, prev: dict | None, run_dir: Path | None = None) -> dict:
    r = phase["result"]
    requested = r.get("requested_rate")
    cpu = phase.get("cpu", {})
    nodes = []
    names = {n["pid"]: n["name"] for n in run.get("nodes", [])}
    for pid, v in cpu.get("processes", {}).items():
        # Local nodes are processes (keyed by PID); in Kubernetes they are pods (keyed by name).
        local = str(pid).isdigit()
        name = names.get(int(pid), str(pid)) if local else str(pid)
        nodes.append(
            {
                "name": name,
                "pid": pid,
                "label": f"node {name} (pid {pid})" if local else f"pod {name}",
                "cores": v.get("cores"),
                "us_per_request": v.get("us_per_request"),
            }
        )
    failed_thresholds = [k for k, ok in r.get("thresholds", {}).items() if not ok]
    profiles = []
    for p in phase.get("profiles", []):
        href = f"{phase['dir']}/profiles/{p['file']}" if p.get("file") else None
        hot = hot_frames(run_dir / href, p.get("event", "")) if href and run_dir else None
        profiles.append(p | {"href": href, "hot": hot})
    return {
        "label": phase["label"],
        "scenario": phase["scenario"],
        "warmup": phase.get("warmup", False),
        "tool": r.get("tool", ""),
        "model": r.get("model", ""),
        "commands": phase.get("commands", []),
        "requested": requested,
        "achieved": r.get("achieved_rate"),
        "achieved_share": (r["achieved_rate"] / requested) if requested else None,
        "duration_s": r.get("duration_s"),
        "requests": r.get("requests"),
        "dropped": r.get("dropped_iterations"),
        "error_rate": r.get("error_rate", 0.0),
        "statuses": sorted(r.get("status_counts", {}).items()),
        "series": [{"name": n, "p": s["percentiles"], "mean": s.get("mean")} for n, s in _series(r)],
        # What the SLO is held to: the phase's own series, not a single target's.
        "p99": slo_p99(r),
        "failed_thresholds": failed_thresholds,
        "profiles": profiles,
        "nodes": nodes,
        "threads": thread_rows(cpu),
        "pauses": pause_rows(cpu, {str(n["pid"]): n["label"] for n in nodes}),
        "loadgen": cpu.get("loadgen", {}),
        # Not measured when the nodes run elsewhere (a cluster on other machines).
        "others_cores": (cpu["others_cpu_s"] / cpu["wall_s"]) if cpu.get("wall_s") and "others_cpu_s" in cpu else None,
        "pods": r.get("pods", []),
        "latency_merge": r.get("latency_merge", ""),
        "machine_busy_share": cpu.get("machine_busy_share"),
        "healing": healing_view(phase),
        "prev": prev,
    }


def thread_rows(cpu: dict) -> list[dict]:
    """The nodes' threads by role, the busiest first: where their CPU went, and how often they waited
    (a context switch to sleep, then one more to wake) or were preempted, per request."""
    wall = cpu.get("wall_s") or 0
    rows = []
    for role, t in cpu.get("threads", {}).items():
        used = t["user_s"] + t["sys_s"]
        rows.append(
            {
                "role": role,
                "cores": used / wall if wall > 0 else None,
                "us_per_request": t.get("us_per_request"),
                "kernel_share": t["sys_s"] / used if used > 0 else None,
                "waits_per_request": t.get("waits_per_request"),
                "preemptions_per_request": t.get("preemptions_per_request"),
            }
        )
    return sorted(rows, key=lambda row: -(row["cores"] or 0))


def pause_rows(cpu: dict, labels: dict[str, str]) -> list[dict]:
    """Each node JVM's stop-the-world pauses in the phase: all its safepoints, and of them the GC's."""
    rows = []
    for pid, p in cpu.get("jvm_pauses", {}).items():
        rows.append(
            {
                "label": labels.get(str(pid), f"pid {pid}"),
                "safepoints": p["safepoints"],
                "stopped_ms": p["stopped_s"] * 1e3,
                "stopped_share": p["stopped_share"],
                "gc_pauses": p["gc_pauses"],
                "gc_ms": p["gc_s"] * 1e3,
                "mean_gc_ms": p["gc_s"] * 1e3 / p["gc_pauses"] if p["gc_pauses"] else None,
            }
        )
    return rows


def comparison_rows(run: dict, prev_run: dict) -> list[dict]:
    prev_phases = {p["label"]: p for p in prev_run.get("phases", [])}
    rows = []
    for phase in run.get("phases", []):
        old = prev_phases.get(phase["label"])
        if not old:
            continue
        new_s, old_s = dict(_series(phase["result"])), dict(_series(old["result"]))
        for name in new_s:
            if name not in old_s:
                continue
            row = {"phase": phase["label"], "series": name, "cells": []}
            pairs = [
                ("achieved req/s", phase["result"].get("achieved_rate"), old["result"].get("achieved_rate"), fmt_rate)
            ]
            for key in ("p50", "p99", "p99.9", "p100"):
                pairs.append(
                    (f"{key} ms", new_s[name]["percentiles"].get(key), old_s[name]["percentiles"].get(key), fmt_ms)
                )
            for title, a, b, f in pairs:
                row["cells"].append({"title": title, "this": f(a), "prev": f(b), "delta": fmt_delta(a, b)})
            rows.append(row)
    return rows


def findings(run: dict, views: list[dict]) -> list[str]:
    """Facts the numbers show, in words; the written conclusion comes from conclusion.md."""
    out = []
    slo = run["config"].get("slo_p99_ms")
    wrk = run["env"].get("wrk", {})
    if any(v["tool"] == "wrk" for v in views):
        where = (
            f"image {wrk['image']}: the wrk2 image builds from source only where GitHub answers"
            if wrk.get("image")
            else "none is installed"
        )
        out.append(
            f"Load came from Debian's wrk, not wrk2 ({where}): it is paced by a Lua "
            "delay() hook and measures latency from the send, so the tail is not corrected for "
            "coordinated omission; k6 phases are open-model."
        )
    elif wrk and not wrk.get("is_wrk2"):
        out.append("wrk2 is not installed here; every phase used k6 (open model, constant-arrival-rate).")
    warmups = [v["label"] for v in views if v["warmup"]]
    if warmups:
        out.append(f"Warm-up phases, not measured (JIT, caches): {', '.join(warmups)}.")
    for v in views:
        if v["warmup"]:
            continue
        if v["scenario"] == "fill":
            out.append(f"fill: {fmt_rate(v['requests'])} keys written at {fmt_rate(v['achieved'])}/s.")
            continue
        p99 = v["p99"]
        text = f"{v['label']}: achieved {fmt_rate(v['achieved'])}/s"
        if v["requested"]:
            text += f" of {fmt_rate(v['requested'])}/s ({fmt_pct(v['achieved_share'], 1)})"
        text += f", p99 {fmt_ms(p99)} ms"
        if slo:
            text += f" (SLO {slo:g} ms {'met' if p99 is not None and p99 <= slo else 'missed'})"
        text += f", {fmt_pct(v['error_rate'])} failed"
        if v["dropped"]:
            text += f", {fmt_rate(v['dropped'])} iterations dropped (no free VU: the server fell behind)"
        node_cores = sum((n["cores"] or 0) for n in v["nodes"])
        if v["nodes"]:
            text += f"; the nodes used {node_cores:.2f} cores, the load generator {fmt_num(v['loadgen'].get('cores'))}"
        if v["pauses"]:
            most = max(v["pauses"], key=lambda p: p["stopped_share"])
            text += f"; of the nodes' JVMs, {most['label']} stood still longest, {fmt_pct(most['stopped_share'])} of the phase"
            if most["mean_gc_ms"] is not None:
                text += f" (its GC pauses {most['mean_gc_ms']:.1f} ms on average)"
        if v["others_cores"] and v["others_cores"] > 0.2:
            text += (
                f"; other processes on the machine used {v['others_cores']:.2f} cores meanwhile, "
                "which disturbs the measurement"
            )
        out.append(text + ".")
    out.extend(healing_findings(views))
    sat = run.get("saturation")
    if sat:
        out.append(
            f"saturation: the highest rate that met every condition was "
            f"{fmt_rate(sat.get('max_sustainable_rate'))}/s; the search stopped {sat.get('stop_reason')}."
        )
    return out


# A phase's healing figures, in the words of its finding, in this order.
HEALING_WORDS = (
    ("written", "{} hints written (replica calls failed or timed out)"),
    ("replayed", "{} hints replayed"),
    ("dropped", "{} hints not kept"),
    ("pending", "{} still pending at its end"),
    ("repaired", "repair copied {} records"),
    ("moved", "the handoff moved {} records"),
    ("purged", "{} tombstones purged"),
    ("previous_reads", "{} reads answered by previous owners"),
)


def healing_findings(views: list[dict]) -> list[str]:
    """The healing in words: each outage, each other phase that needed healing, or that none did."""
    read = [v for v in views if v["healing"]]
    if not read:
        return []
    out = []
    for v in read:
        h = v["healing"]
        if h["text"]:
            out.append(f"{v['label']}: {h['text']}.")
        elif h["anything"]:
            t = h["total"]
            parts = [words.format(fmt_rate(t[figure])) for figure, words in HEALING_WORDS if t[figure]]
            out.append(f"{v['label']}: {', '.join(parts)}.")
    if not any(v["healing"]["anything"] for v in read):
        out.append(
            "No phase needed healing: no hint was written or replayed, no record repaired or moved "
            "(an outage phase, PHASES=...,outage, freezes a node to watch the cluster heal)."
        )
    return out


# ----------------------------------------------------------------------------------------- render


def generate(run_dir: Path, compare: Path | None = None) -> tuple[Path, Path]:
    run_dir = Path(run_dir)
    run = load_run(run_dir)
    prev_dir = previous_run(run_dir, compare)
    prev_run = load_run(prev_dir) if prev_dir else None
    prev_phases = {p["label"]: p for p in prev_run["phases"]} if prev_run else {}

    plots_dir = run_dir / "plots"
    plots_dir.mkdir(exist_ok=True)
    images: dict[str, bytes] = {}

    views = []
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    overview = []
    for i, phase in enumerate(run["phases"]):
        prev = prev_phases.get(phase["label"])
        view = phase_view(run, phase, prev, run_dir)
        series = []
        for j, (name, s) in enumerate(_series(phase["result"])):
            series.append((f"{name}", s["spectrum"], {"color": colors[j % len(colors)], "linewidth": 1.6}))
        if prev:
            for j, (name, s) in enumerate(_series(prev["result"])):
                series.append(
                    (
                        f"{name}, previous run",
                        s["spectrum"],
                        {"color": colors[j % len(colors)], "linestyle": "--", "linewidth": 1.0, "alpha": 0.7},
                    )
                )
        if is_measured(phase):
            all_series = dict(_series(phase["result"]))
            first = all_series.get("all") or next(iter(all_series.values()), None)
            if first:
                overview.append(
                    (phase["label"], first["spectrum"], {"color": colors[i % len(colors)], "linewidth": 1.4})
                )
        name = f"spectrum-{phase['dir'].split('/')[-1]}.png"
        images[name] = spectrum_plot(f"{phase['label']}: percentile spectrum", series)
        view["plot"] = name
        views.append(view)
    if len(overview) > 1:
        images["spectrum-overview.png"] = spectrum_plot("every phase", overview)

    sat = run.get("saturation")
    if sat and sat.get("steps"):
        images["saturation.png"] = saturation_plot(
            sat["steps"], sat.get("slo_p99_ms", run["config"].get("slo_p99_ms", 10))
        )

    for name, data in images.items():
        (plots_dir / name).write_bytes(data)

    conclusion_path = run_dir / "conclusion.md"
    conclusion = conclusion_path.read_text().strip() if conclusion_path.exists() else ""
    all_commands = []
    for phase in run["phases"]:
        all_commands.extend(phase.get("commands", []))
        all_commands.extend(p["command"] for p in phase.get("profiles", []))

    ctx = {
        "kind": KINDS.get(run["kind"], run["kind"]),
        "run": run,
        "env": run["env"],
        "config": run["config"],
        "views": views,
        "table": TABLE,
        "images": {k: base64.b64encode(v).decode() for k, v in images.items()},
        "has_overview": "spectrum-overview.png" in images,
        "saturation": sat,
        "hotpath": run.get("hotpath"),
        "prev_run": prev_run,
        "prev_rel": (Path("..") / prev_dir.name)
        if prev_dir and prev_dir.parent.resolve() == run_dir.parent.resolve()
        else prev_dir,
        "comparison": comparison_rows(run, prev_run) if prev_run else [],
        "findings": findings(run, views),
        "has_healing": any(v["healing"] for v in views),
        "conclusion": conclusion,
        "conclusion_paragraphs": [p.strip() for p in conclusion.split("\n\n") if p.strip()],
        "all_commands": all_commands,
        "report_command": f"make lab-report RUN={tools.rel(run_dir)}",
    }
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters |= {"ms": fmt_ms, "rate": fmt_rate, "num": fmt_num, "pct": fmt_pct}
    md = env.get_template("report.md.j2").render(ctx)
    env_html = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env_html.filters |= env.filters
    page = env_html.get_template("report.html.j2").render(ctx)
    md_path, html_path = run_dir / "report.md", run_dir / "report.html"
    md_path.write_text(md)
    html_path.write_text(page)
    print(
        f"wrote {tools.rel(md_path)} and {tools.rel(html_path)}"
        + (f" (compared with {tools.rel(prev_dir)})" if prev_dir else " (no previous report to compare with)")
    )
    return md_path, html_path
