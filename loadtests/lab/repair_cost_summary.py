"""The first screen of `make lab-repair-cost` (scripts/repair-cost.sh): summary.md, made from the run's
summary.json, answers "what does repair cost" with each target, its figure and whether it is met:

- with rounds running back to back during the load, GET and PUT p99 within +10 % of repair off;
- a round where nothing differs over 1M keys under 1 s of CPU (all nodes, above what they burn idle);

then the figures behind them. Run: python -m lab.repair_cost_summary SUMMARY_JSON [SUMMARY_MD]."""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: p99 with repair on, at most this many times p99 with repair off.
P99_RATIO_TARGET = 1.10
#: CPU seconds a round where nothing differs may cost, over TARGET_KEYS keys.
ROUND_CPU_TARGET_S = 1.0
TARGET_KEYS = 1_000_000


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} ms"


def _above_idle(value: float, unit: str, digits: int) -> str:
    """CPU above what the nodes burn idle; a negative figure is the idle baseline's own noise, shown as such."""
    if value < 0:
        return f"0 {unit} (within the idle baseline's noise: {value:.{digits}f})"
    return f"{value:.{digits}f} {unit}"


def _met(ok: bool | None) -> str:
    return "not measured" if ok is None else ("**met**" if ok else "**not met**")


def p99_rows(summary: dict) -> list[tuple[str, str, str, str]]:
    """(target, build, figure, verdict) for each scenario and build measured with repair on."""
    rows = []
    fg = summary.get("foreground") or {}
    for scenario in ("get", "put"):
        off = fg.get(f"{scenario}/off/head")
        builds = sorted(k.split("/")[2] for k in fg if k.startswith(f"{scenario}/") and k.split("/")[1] != "off")
        target = f"{scenario.upper()} p99, rounds back to back, within +{round((P99_RATIO_TARGET - 1) * 100)} % of repair off"
        if not off or not builds:
            rows.append((target, "-", "not measured in this run", _met(None)))
            continue
        for build in builds:
            for key in sorted(k for k in fg if k.startswith(f"{scenario}/") and k.endswith(f"/{build}") and "/off/" not in k):
                on = fg[key]
                ratio = on["p99_ms"] / off["p99_ms"] if off["p99_ms"] else float("inf")
                pairs = (summary.get("foreground_p99_ratio") or {}).get(key, {}).get("each_pair") or []
                figure = (f"{ratio:.2f}× ({_ms(on['p99_ms'])} on against {_ms(off['p99_ms'])} off, median of {on['runs']}"
                          + (f"; run by run {', '.join(f'{p:.2f}×' for p in pairs)}" if pairs else "") + ")")
                arm = key.split("/")[1]
                rows.append((target, build if arm == "on" else f"{build}, arm {arm}", figure, _met(ratio <= P99_RATIO_TARGET)))
    return rows


def round_cpu_rows(summary: dict) -> list[tuple[str, str, str, str]]:
    """(target, build, figure, verdict) for the round where nothing differs, per build (default limits)."""
    keys = (summary.get("setup") or {}).get("keys") or 0
    target = f"a {TARGET_KEYS // 1_000_000}M-key round where nothing differs under {ROUND_CPU_TARGET_S:g} s of CPU"
    steady = {k: v for k, v in (summary.get("steady") or {}).items() if k.endswith("/default")}
    if not steady:
        return [(target, "-", "not measured in this run", _met(None))]
    rows = []
    for key in sorted(steady):
        figures = steady[key]
        per_round = figures["us_per_key_round"] * keys / 1e6
        each = ", ".join(f"{us * keys / 1e6:.2f} s" for us in figures.get("each_us_per_key_round") or [])
        figure = f"{_above_idle(per_round, 's', 2)} per round (all nodes, above idle; median of {figures['runs']}: {each})"
        if keys < TARGET_KEYS:
            rows.append((target, key.split("/")[0], figure + f", over {keys:,} keys, not {TARGET_KEYS:,}", _met(None)))
        else:
            rows.append((target, key.split("/")[0], figure, _met(per_round < ROUND_CPU_TARGET_S)))
    return rows


def markdown(summary: dict) -> str:
    setup = summary.get("setup") or {}
    lines = [
        "# What repair costs",
        "",
        f"Commit {setup.get('commit', '?')}; builds {', '.join(setup.get('jars') or ['head'])}"
        + (f" (base: {setup['jar_base']})" if setup.get("jar_base") else "")
        + f"; {setup.get('keys', '?'):,} keys of {setup.get('value_size', '?')} bytes on 3 nodes; {setup.get('runs', '?')} runs"
        + f"; GET {setup.get('get_rate', '?')}/s, PUT {setup.get('put_rate', '?')}/s at 2/3 for {setup.get('duration', '?')}"
        + f" after {setup.get('warmup', '?')}; load average {setup.get('loadavg', '?')} on {setup.get('cores', '?')} cores at the start.",
        "",
        "## Targets",
        "",
        "| target | build | figure | verdict |",
        "| --- | --- | --- | --- |",
    ]
    for target, build, figure, verdict in p99_rows(summary) + round_cpu_rows(summary):
        lines.append(f"| {target} | {build} | {figure} | {verdict} |")
    fg = summary.get("foreground") or {}
    if fg:
        lines += ["", "## Under load", "", "| scenario / repair / build | p99 | p50 | rate served | node cores | rounds complete |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for key in sorted(fg):
            f = fg[key]
            lines.append(f"| {key} | {_ms(f['p99_ms'])} ({', '.join(f'{p:.2f}' for p in f['each_p99_ms'])}) | {_ms(f['p50_ms'])}"
                         f" | {f['achieved_rate']:.0f}/s | {f['node_cores']:.2f} | {f['repair_rounds']} |")
    steady = summary.get("steady") or {}
    if steady:
        lines += ["", "## Rounds where nothing differs (node 0 with both peers)", "", "| build / limits | wall | CPU per key and round |",
                  "| --- | --- | --- |"]
        for key in sorted(steady):
            lines.append(f"| {key} | {steady[key]['wall_s']:.2f} s | {_above_idle(steady[key]['us_per_key_round'], 'µs', 3)} |")
    refill = summary.get("refill") or {}
    if refill:
        lines += ["", "## A wiped node refilled", "", "| build / limits | records in | rounds complete at | keys/s | MiB/s | CPU per key |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for key in sorted(refill):
            r = refill[key]
            lines.append(f"| {key} | {r['records_s']:.1f} s | {r['complete_s']:.1f} s | {r['keys_per_s']:.0f} | {r['mib_per_s']:.2f}"
                         f" | {r['us_per_key']:.1f} µs |")
    lines += ["", "Everything measured: summary.json and results.jsonl beside this file.", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print("usage: python -m lab.repair_cost_summary SUMMARY_JSON [SUMMARY_MD]", file=sys.stderr)
        return 2
    source = Path(argv[0])
    target = Path(argv[1]) if len(argv) == 2 else source.with_name("summary.md")
    target.write_text(markdown(json.loads(source.read_text())))
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
