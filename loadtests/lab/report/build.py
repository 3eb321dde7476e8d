"""A whole report: a run's views, its figures into plots/, and the two files rendered from them."""

from __future__ import annotations

from pathlib import Path

from .. import conclusions, tools
from ..conclusions import files as conclusion_files
from . import findings, flames, headline, ledgerview, plots, render, runs, scaleplots, scaleview, seriesplot, soakplots, soakview, verdicts, views

KINDS = {
    "phases": "Fixed-rate phases",
    "saturation": "Saturation search",
    "faults": "Fault scenario",
    "hotpath": "Hot-path benchmark",
    "scale": "Scale benchmark",
    "soak": "Soak",
    "disaster": "Disaster: backup under load, data destroyed, restore",
    "largereads": "Large-read overload",
}


def _spectra(phase: dict, prev: dict | None) -> list[tuple[str, list, int | None, dict]]:
    """A phase's latency series for its spectrum plot, the previous run's same phase dashed."""
    out = []
    for j, (name, s) in enumerate(views.series(phase["result"])):
        style = {"color": plots.colour(j), "linewidth": 1.6}
        out.append((name, s["spectrum"], phase["result"].get("requests"), style))
    if prev:
        for j, (name, s) in enumerate(views.series(prev["result"])):
            style = {"color": plots.colour(j), "linestyle": "--", "linewidth": 1.0, "alpha": 0.7}
            out.append((f"{name}, previous run", s["spectrum"], prev["result"].get("requests"), style))
    return out


def write_plots(run: dict, phase_views: list[dict], prev_phases: dict, plots_dir: Path) -> bool:
    """Every figure of the report into plots/, each view told the names of its own; True when the
    overview of every phase was drawn."""
    slo = run["config"].get("slo_p99_ms")
    spectra = {phase["label"]: _spectra(phase, prev_phases.get(phase["label"])) for phase in run["phases"]}
    shown = [spectra[v["label"]] for v in phase_views if not v["warmup"]]
    ylim = plots.latency_range([plots.spectrum_xy(s, n)[1] for series in shown for _, s, n, _ in series], slo)
    overview = []
    # The steps of a search have their curve; beside fixed-rate phases they would crowd the overview.
    fixed = any(v["measured"] and not v["step"] for v in phase_views)
    for phase, view in zip(run["phases"], phase_views):
        stem = phase["dir"].split("/")[-1]
        # A warm-up measures the JIT, not the store: its table is enough, without figures.
        view["plot"] = None if view["warmup"] else f"spectrum-{stem}.png"
        if view["plot"]:
            (plots_dir / view["plot"]).write_bytes(
                plots.spectrum_plot(f"{phase['label']}: percentile spectrum", spectra[phase["label"]], slo, ylim)
            )
        if view["measured"] and spectra[phase["label"]] and not (fixed and view["step"]):
            _, spectrum, requests, _ = spectra[phase["label"]][0]
            overview.append((phase["label"], spectrum, requests, {"color": plots.colour(len(overview)), "linewidth": 1.4}))
        view["timeseries_plot"], view["timeseries_panels"] = None, []
        ts = view["timeseries"]
        if ts and not view["warmup"] and seriesplot.panels(ts):
            view["timeseries_plot"] = f"timeseries-{stem}.png"
            view["timeseries_panels"] = seriesplot.panels(ts)
            figure = seriesplot.timeseries_plot(
                f"{phase['label']}: second by second", ts, phase, view["requested"], slo
            )
            (plots_dir / view["timeseries_plot"]).write_bytes(figure)
    if len(overview) > 1:
        (plots_dir / "spectrum-overview.png").write_bytes(
            plots.spectrum_plot("every measured phase", overview, slo, ylim)
        )
    sat = run.get("saturation")
    if sat and sat.get("steps"):
        curve = plots.saturation_curve(
            headline.saturation_points(run),
            sat.get("slo_p99_ms", slo or 10),
            sat.get("max_sustainable_rate"),
            sat.get("scenario", "?"),
        )
        (plots_dir / "saturation.png").write_bytes(curve)
    return len(overview) > 1


def generate(run_dir: Path, compare: Path | None = None) -> tuple[Path, Path]:
    run_dir = Path(run_dir)
    run = runs.load_run(run_dir)
    prev_dir = runs.previous_run(run_dir, compare)
    prev_run = runs.load_run(prev_dir) if prev_dir else None
    prev_phases = {p["label"]: p for p in prev_run["phases"]} if prev_run else {}

    phase_views = [
        views.phase_view(run, phase, prev_phases.get(phase["label"]), run_dir, prev_dir) for phase in run["phases"]
    ]
    for view in phase_views:
        flames.write_diffs(run_dir, view, prev_dir)
    plots_dir = run_dir / "plots"
    plots_dir.mkdir(exist_ok=True)
    has_overview = write_plots(run, phase_views, prev_phases, plots_dir)

    scale = scaleview.view(run)
    if scale:
        scaleplots.write(scale, plots_dir)
    soak = soakview.view(run)
    if soak:
        soakplots.write(run, soak, plots_dir)
    verdict = verdicts.build(run)
    verdicts.write(run_dir, verdict)
    try:
        conclusions.write_draft(run_dir, run)
    except Exception as e:  # noqa: BLE001 - a draft is a help to the writer, never a reason to lose the report
        print(f"no draft conclusion: {type(e).__name__}: {e}")
    conclusion, conclusion_draft = conclusion_files.shown(run_dir)
    all_commands = []
    for phase in run["phases"]:
        all_commands.extend(phase.get("commands", []))
        all_commands.extend(p["command"] for p in phase.get("profiles", []))
    sat = run.get("saturation")
    search = headline.sustained(sat) if sat and sat.get("steps") else None
    ctx = {
        "title": verdict["title"],
        "kind": KINDS.get(run["kind"], run["kind"]),
        "run": run,
        "env": run["env"],
        "config": run["config"],
        "replicas": runs.replicas(run),
        "verdict": verdict,
        "views": phase_views,
        "table": views.TABLE,
        "has_overview": has_overview,
        "saturation": sat if sat and sat.get("steps") else None,
        "saturation_points": headline.saturation_points(run) if sat else [],
        "hotpath": run.get("hotpath"),
        "largereads": run.get("largereads"),
        "scale": scale,
        "soak": soak,
        "prev_run": prev_run,
        "prev_rel": (Path("..") / prev_dir.name).as_posix()
        if prev_dir and prev_dir.parent.resolve() == run_dir.parent.resolve()
        else prev_dir,
        "differences": runs.differences(run, prev_run) if prev_run else [],
        "comparison": views.comparison_rows(run, prev_run) if prev_run else [],
        "findings": findings.findings(run, phase_views, {"saturation": search}),
        "tool_notes": findings.tool_notes(run, phase_views),
        "has_healing": any(v["healing"] for v in phase_views),
        "ledgers": ledgerview.views(run),
        "conclusion": conclusion,
        "conclusion_draft": conclusion_draft,
        "all_commands": all_commands,
        "report_command": f"make lab-report RUN={tools.rel(run_dir)}",
    }
    md_path, html_path = render.write(run_dir, ctx)
    print(
        f"wrote {tools.rel(md_path)} and {tools.rel(html_path)}"
        + (f" (compared with {tools.rel(prev_dir)})" if prev_dir else " (no previous report to compare with)")
    )
    return md_path, html_path
