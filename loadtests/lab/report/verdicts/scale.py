"""The scale benchmark's verdict: per size the fill rate and the GET p99 against the smallest size's
(performance), every fill's keys stored and the node alive to the end (data). Its targets are in
run.json's "scale" (min_fill_rate, max_p99_growth), its figures per size from lab.report.scaleview."""

from __future__ import annotations

from ... import scale as bench
from .. import fmt, headline, runs, scaleview
from ..fmt import listing
from . import fill
from .rows import Part, row


def targets(scale: dict) -> tuple[float, float]:
    t = scale.get("targets") or {}
    return t.get("min_fill_rate", bench.MIN_FILL_RATE), t.get("max_p99_growth", bench.MAX_P99_GROWTH)


def size_rows(scale: dict, sizes: list[dict]) -> list[dict]:
    """One row per size: its fill's rate (when this run filled it) and its GET p99 as a multiple of
    the smallest size's."""
    fill_min, growth_max = targets(scale)
    base = next((r["get"]["p99"] for r in sizes if r["get"]["p99"]), None)
    out = []
    for r in sizes:
        observed, checks = [], []
        if r["fill_rate"] is not None:
            observed.append(f"fill {fmt.rate(r['fill_rate'])} keys/s")
            checks.append(r["fill_rate"] >= fill_min)
        else:
            observed.append("no fill (the keys were there)")
        p99 = r["get"]["p99"]
        if p99 is not None and base:
            growth = p99 / base
            observed.append(f"GET p99 {fmt.ms(p99)} ms, {growth:.2f}× the smallest size's")
            checks.append(growth <= growth_max)
        else:
            observed.append("GET p99 not measured")
        out.append(
            row(
                f"{fmt.rate(r['keys'])} keys",
                "; ".join(observed),
                f"fill ≥ {fmt.rate(fill_min)} keys/s; GET p99 ≤ {growth_max:g}× the smallest size's",
                all(checks) if checks else None,
                "performance",
            )
        )
    return out


def survival_row(scale: dict) -> dict:
    why = scale.get("failure") or ""
    if scale.get("exit_code") is not None and "exited" not in why:
        why = f"{why}; the node's process exited with {scale['exit_code']}".lstrip("; ")
    oom = (scale.get("cgroup_after") or {}).get("oom_kill")
    if oom:
        why = f"{why}; the cgroup counted {oom} OOM kill(s)".lstrip("; ")
    return row(
        "the node survived",
        why or "still running and answering after the last size",
        "no OOM kill, still running and answering",
        scale.get("survived"),
        "data",
    )


def title(run: dict) -> str:
    sc = run.get("scale") or {}
    sizes = sc.get("sizes") or [0]
    memory = sc.get("memory") or {}
    enforced = "enforced" if memory.get("enforced") else "not enforced"
    return (
        f"kvlab scale: {headline.nodes(run)}, {fmt.rate(sizes[0])} to {fmt.rate(sizes[-1])} keys of "
        f"{sc.get('value_size', '?')} bytes, {' and '.join(runs.tools_used(run))} at {fmt.rate(sc.get('rate'))}/s, "
        f"memory limit {memory.get('limit', '?')} ({enforced})"
    )


def answer(scale: dict, sizes: list[dict], out: list[dict]) -> str:
    p99s = [(r["keys"], r["get"]["p99"]) for r in sizes if r["get"]["p99"] is not None]
    fills = [r["fill_rate"] for r in sizes if r["fill_rate"] is not None]
    parts = []
    if len(p99s) >= 2:
        parts.append(
            f"from {fmt.rate(p99s[0][0])} to {fmt.rate(p99s[-1][0])} keys GET p99 went from {fmt.ms(p99s[0][1])} to "
            f"{fmt.ms(p99s[-1][1])} ms ({p99s[-1][1] / p99s[0][1]:.2f}×)"
        )
    if fills:
        parts.append(
            f"the fills ran at {fmt.rate(min(fills))}–{fmt.rate(max(fills))} keys/s"
            if len(fills) > 1
            else f"the fill ran at {fmt.rate(fills[0])} keys/s"
        )
    parts.append("the node survived" if scale.get("survived") else "the node did not survive")
    failed = [r["check"] for r in out if r["status"] == "fail"]
    text = listing(parts)
    text = text[0].upper() + text[1:]
    return text + (f": {listing(failed)} missed." if failed else ": every target met.")


def build(run: dict) -> Part:
    sc = run.get("scale") or {}
    view = scaleview.view(run)
    sizes = view["rows"] if view else []
    fill_min, growth_max = targets(sc)
    memory = (sc.get("memory") or {}).get("limit", "?")
    question = (
        f"As one node with a memory limit of {memory} is filled to more keys, does it keep filling at "
        f"{fmt.rate(fill_min)} keys/s or faster, keep GET p99 within {growth_max:g}× of the smallest size's, "
        "store every key and survive?"
    )
    out = size_rows(sc, sizes) + fill.rows(run) + [survival_row(sc)]
    return Part(title(run), question, answer(sc, sizes, out), out, [])
