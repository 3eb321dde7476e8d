"""A phase's results in Kubernetes: the pods' logs saved in the phase's directory and read
(lab.k8s.outputs), one result merged from them in the shape a local phase has, and the commands
the report shows."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from .. import tools, wrkresult
from ..load import LoadSpec, log
from .jobs import PhaseJob
from .kubectl import Kubectl, completion_index
from .outputs import PodOutput, merge_k6, parse_job_log


def collect(kubectl: Kubectl, ph: PhaseJob, pods: list[dict], out: Path) -> list[PodOutput]:
    """Each pod's log (the tool's output, k6's summary and samples) saved in out, and read."""
    outputs = []
    for p in pods:
        index = completion_index(p)
        name = p["metadata"]["name"]
        text = kubectl.run("logs", name, check=False, timeout=60)
        suffix = f"-{index}" if ph.pods > 1 else ""
        (out / (f"wrk{suffix or '-0'}.txt" if ph.tool != "k6" else f"k6{suffix}.log")).write_text(text)
        o = parse_job_log(text, index)
        o.pod, o.node = name, p["spec"].get("nodeName", "")
        if o.summary is not None:
            (out / f"k6-summary{suffix}.json").write_text(json.dumps(o.summary, indent=1))
        if o.samples is not None:
            (out / f"k6-samples{suffix or '-0'}.csv").write_bytes(o.samples)
        elif o.samples_note:
            log(f"{ph.job}: pod {name} sent no per-request samples: {o.samples_note}")
        outputs.append(o)
    if len(outputs) < ph.pods:
        raise RuntimeError(f"Job {ph.job}: only {len(outputs)} of {ph.pods} pods left a log")
    return outputs


def merged(ph: PhaseJob, spec: LoadSpec, out: Path, outputs: list[PodOutput], target: str, wrk2: bool) -> tuple[dict, list[dict]]:
    """One result from the pods' outputs, and each pod's own (k6: its summary; wrk: the one result)."""
    for o in outputs:
        if o.error or o.exit_code is None:
            raise RuntimeError(f"{ph.tool} pod {o.pod}: {o.error or 'no exit code in its log'}; see {tools.rel(out)}")
        if o.exit_code not in (0, 99):
            log(f"{ph.job}: {ph.tool} in pod {o.pod} exited with {o.exit_code}; see {tools.rel(out)}")
    if ph.tool == "k6":
        missing = [o.pod for o in outputs if o.summary is None]
        if missing:
            raise RuntimeError(f"k6 wrote no summary in pods {', '.join(missing)}; see their logs in {tools.rel(out)}")
        parts = [o.summary for o in outputs]
        result = merge_k6(parts)
    else:
        raw = wrkresult.parse_wrk(out / "wrk-0.txt", target)
        result = wrkresult.merge_wrk(spec, [raw], wrk=tools.Wrk(f"{ph.tool} in {ph.image}", wrk2, outputs[0].version))
        parts = [result]
    result["tool_version"] = outputs[0].version
    return result, parts


def commands(ph: PhaseJob, namespace: str) -> list[str]:
    """How the phase ran, as the report shows it: the Job applied, and each pod's command."""
    return [
        f"kubectl --namespace {namespace} apply -f {tools.rel(ph.manifest_path)}   "
        f"# Job {ph.job}: {ph.pods} pod{'s' if ph.pods > 1 else ''} of {ph.image}",
        ("in each pod: " if ph.pods > 1 else "in the pod: ")
        + " ".join(f"{k}={shlex.quote(v)}" for k, v in ph.env.items())
        + " "
        + shlex.join(ph.argv[2:])
        + (
            "   # plus --execution-segment <its segment> --execution-segment-sequence "
            f"{ph.env['K6_SEGMENT_SEQUENCE']}"
            if "K6_SEGMENT_SEQUENCE" in ph.env
            else ""
        ),
    ]
