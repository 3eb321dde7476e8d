"""The verdict of each kind of run, on fixture runs (fixtures/runs: the run.json of real runs, trimmed
to what a verdict reads) and synthetic ones: its title, question, answer and rows, what each row
gates, k6's thresholds, a phase's ledger, and the gate's exit codes."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import tempfile
import unittest
from pathlib import Path

from lab import __main__ as cli
from lab import checkverdict
from lab.report import verdicts
from lab.report.verdicts import gate, ledger, thresholds
from lab.report.verdicts.rows import Part, row
from lab.tests.test_lab import phase, write_run

RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"


def fixture(name: str) -> dict:
    return json.loads((RUNS / f"{name}.json").read_text())


def rows_by_check(verdict: dict) -> dict[str, dict]:
    return {r["check"]: r for r in verdict["rows"]}


class KindTest(unittest.TestCase):
    def test_the_hot_path_opens_with_the_cpu_target_it_missed(self):
        v = verdicts.build(fixture("hotpath"))
        self.assertEqual("kvlab hot path: 1 node, wrk, GET at 10 000 and 20 000/s and PUT at 15 000/s", v["title"])
        self.assertFalse(v["passed"])
        rows = rows_by_check(v)
        get = rows["GET at 10 000/s: server CPU per request"]
        self.assertEqual(("fail", "performance"), (get["status"], get["gate"]))
        self.assertEqual("47.4 µs, 3.16× the no-op route's 15.0 µs", get["observed"])
        self.assertEqual("≤ 2× the no-op route's", get["target"])
        self.assertIn("2.94×", rows["GET at 20 000/s: server CPU per request"]["observed"])
        # A PUT's cost is shown beside GET's, not held to the target.
        self.assertEqual(("info", "none"), (rows["PUT at 15 000/s: server CPU per request"]["status"],
                                            rows["PUT at 15 000/s: server CPU per request"]["gate"]))
        self.assertEqual("pass", rows["GET at 10 000/s: rate, p99, failed"]["status"])
        self.assertIn("GET at 10 000/s and GET at 20 000/s over the 2× target", v["answer"])
        self.assertNotIn("profiled get@10000", str(v["rows"]), "the profiled phases measure the profiler too")

    def test_a_hot_path_whose_baseline_fell_behind_compares_nothing(self):
        run = fixture("hotpath")
        run["hotpath"]["rows"][0]["achieved"] = 8000
        row_ = rows_by_check(verdicts.build(run))["GET at 10 000/s: server CPU per request"]
        self.assertEqual("info", row_["status"])
        self.assertIn("the no-op route achieved only 8 000/s: not comparable", row_["observed"])

    def test_the_fault_scenario_answers_per_fault_and_is_not_held_to_the_slo(self):
        v = verdicts.build(fixture("faults"))
        self.assertEqual("kvlab fault scenario: 3 nodes, replicas 2/3, k6 at 500/s; n2 killed, paused and cut off", v["title"])
        self.assertTrue(v["passed"], [r for r in v["rows"] if r["status"] == "fail"])
        rows = rows_by_check(v)
        kill = rows["faults: n2 killed (second 20–41)"]
        self.assertEqual(
            "3 465 requests failed; rate back 0.8 s after, p99 back 24.8 s after; 3 458 hints replayed, 586 records repaired",
            kill["observed"],
        )
        self.assertEqual(("pass", "performance"), (kill["status"], kill["gate"]))
        load = rows["faults: rate, p99, failed while faults came and went"]
        self.assertEqual(("info", "none"), (load["status"], load["gate"]))
        self.assertIn("p99 1000 ms", load["observed"])
        self.assertEqual(("pass", "data"), (rows["faults: the cluster healed"]["status"], rows["faults: the cluster healed"]["gate"]))
        self.assertEqual("info", rows["faults: acknowledged writes lost"]["status"])
        self.assertIn("client's timeout (1 s)", v["notes"][0])
        self.assertTrue(v["thresholds"] and not any(t["gated"] for t in v["thresholds"]))
        self.assertEqual(
            "3 faults of n2: 8 210 requests failed while they lasted; the rate was back within 1.0 s after each; p99 was "
            "back within 24.8 s after each; the cluster healed; acknowledged writes were not checked.",
            v["answer"],
        )

    def test_a_fault_never_back_within_the_phase_fails_and_an_unhealed_cluster_fails_data(self):
        run = fixture("faults")
        faulty = run["phases"][-1]
        faulty["faults"][1]["recovery"]["p99_recovered_s"] = None
        faulty["heal"] = {"timeout_s": 120, "healed": False, "why": "2 hints still pending"}
        v = verdicts.build(run)
        rows = rows_by_check(v)
        self.assertEqual("fail", rows["faults: n2 paused (second 70–85)"]["status"])
        self.assertIn("p99 not back within the phase", rows["faults: n2 paused (second 70–85)"]["observed"])
        self.assertEqual(("fail", "data"), (rows["faults: the cluster healed"]["status"], rows["faults: the cluster healed"]["gate"]))
        self.assertEqual("no: 2 hints still pending", rows["faults: the cluster healed"]["observed"])
        self.assertEqual(gate.FAILED, gate.exit_code(v, "data"))

    def test_the_saturation_search_answers_with_its_limit_and_how_closely_it_bracketed_it(self):
        v = verdicts.build(fixture("saturation"))
        self.assertEqual("kvlab saturation search: 3 nodes, replicas 2/3, k6, get from 1 000/s up", v["title"])
        rows = rows_by_check(v)
        best = rows["highest rate sustained within the SLO"]
        self.assertEqual("2 250/s of get (p99 8.66 ms, 2 250/s achieved, 0.00% failed)", best["observed"])
        self.assertEqual(("pass", "performance"), (best["status"], best["gate"]))
        bracket = rows["the limit, bracketed"]
        self.assertEqual(("fail", "none"), (bracket["status"], bracket["gate"]))
        self.assertIn("between 2 250/s (held) and 3 375/s (p99 12.05 ms > SLO 10 ms): 50% apart", bracket["observed"])
        self.assertTrue(v["passed"])

    def test_a_bisected_search_is_within_its_precision_and_one_where_nothing_held_fails(self):
        run = fixture("saturation")
        sat = run["saturation"]
        sat["steps"] += [
            {"rate": 2812, "achieved_rate": 2810, "p99_ms": 9.5, "error_rate": 0, "ok": True, "bisect": True},
            {"rate": 3094, "achieved_rate": 3090, "p99_ms": 11.0, "error_rate": 0, "ok": False, "bisect": True,
             "why": "p99 11.00 ms > SLO 10 ms"},
            {"rate": 2953, "achieved_rate": 2950, "p99_ms": 9.9, "error_rate": 0, "ok": True, "bisect": True},
        ]
        sat["precision"] = 0.1
        v = verdicts.build(run)
        bracket = rows_by_check(v)["the limit, bracketed"]
        self.assertEqual("pass", bracket["status"])
        self.assertIn("between 2 953/s (held) and 3 094/s (p99 11.00 ms > SLO 10 ms): 5% apart", bracket["observed"])
        self.assertIn("so the limit lies between the two, 5% apart.", v["answer"])
        for s in sat["steps"]:
            s["ok"] = False
        v = verdicts.build(run)
        self.assertEqual("fail", rows_by_check(v)["highest rate sustained within the SLO"]["status"])
        self.assertFalse(v["passed"])

    def test_kubernetes_is_the_lab_with_its_title_and_k6_thresholds_and_a_mixed_phase_holds_its_own_p99(self):
        v = verdicts.build(fixture("k8s-lab"))
        self.assertEqual(("lab", "k8s"), (v["kind"], v["executor"]))
        self.assertEqual("kvlab fixed-rate phases on Kubernetes: 3 pods, replicas 2/3, k6 and wrk at 1 000/s", v["title"])
        rows = rows_by_check(v)
        # All of the phase's requests, the SLO's p99, with each operation's beside it.
        self.assertEqual(
            "996 of 1 000/s (99.6%), p99 21.4 ms (get 19.0 ms, put 23.1 ms), 0.00% failed", rows["mixed"]["observed"]
        )
        self.assertEqual("pass", rows["get@wrk"]["status"])
        self.assertIn("(from the send)", rows["get@wrk"]["observed"])
        k6 = rows["k6 thresholds of the phases held to the SLO"]
        self.assertEqual(("fail", "performance"), (k6["status"], k6["gate"]))
        self.assertEqual("7 of 10 crossed, in put, get and mixed (the table below)", k6["observed"])
        mixed_get = next(t for t in v["thresholds"] if t["phase"] == "mixed" and "op:get" in t["threshold"])
        self.assertEqual(("19.0 ms", False, True), (mixed_get["observed"], mixed_get["ok"], mixed_get["gated"]))
        self.assertNotIn("get@666", [t["phase"] for t in v["thresholds"]], "a search's steps cross them by design")
        self.assertEqual(
            "3 of 4 phases missed the SLO: put (p99 32.8 ms), get (p99 16.2 ms) and mixed (p99 21.4 ms); the short search "
            "sustained 666/s of get.",
            v["answer"],
        )
        self.assertEqual((gate.FAILED, 0, 0), tuple(gate.exit_code(v, m) for m in gate.MODES))

    def test_the_scale_run_has_a_row_per_size_and_data_rows_for_its_fills_and_survival(self):
        v = verdicts.build(fixture("scale"))
        rows = rows_by_check(v)
        self.assertEqual(
            "fill 42 875 keys/s; GET p99 2.10 ms, 1.35× the smallest size's", rows["10 000 000 keys"]["observed"]
        )
        self.assertEqual(("pass", "data"), (rows["the node survived"]["status"], rows["the node survived"]["gate"]))
        self.assertEqual("9 000 000 of 9 000 000 keys stored", rows["fill to 10M: every key stored"]["observed"])
        self.assertTrue(v["passed"])
        self.assertEqual([], v["thresholds"], "wrk ran every phase")
        run = fixture("scale")
        run["scale"] |= {"survived": False, "failure": "the node did not answer after the steps to 10M keys", "exit_code": 137}
        v = verdicts.build(run)
        survived = rows_by_check(v)["the node survived"]
        self.assertEqual("fail", survived["status"])
        self.assertEqual(
            "the node did not answer after the steps to 10M keys; the node's process exited with 137", survived["observed"]
        )
        self.assertEqual(gate.FAILED, gate.exit_code(v, "data"))


def lab_run(*phases: dict, **config) -> dict:
    return {
        "kind": "phases", "executor": "local", "nodes": [{"name": f"n{i}", "pid": i} for i in range(3)],
        "config": {"slo_p99_ms": 10, "max_error_rate": 0.01, "replicas": "", "rate": 500} | config,
        "phases": list(phases),
    }


class SyntheticTest(unittest.TestCase):
    def test_a_fill_that_did_not_store_every_key_fails_the_performance_gate_not_the_data_gate(self):
        fill = {"label": "fill", "scenario": "fill", "result": {"tool": "k6", "keys_filled": [0, 1000], "keys": 1000,
                                                               "status_counts": {"201": 990, "503": 10}, "latency": {}}}
        get = phase("get", 0.4, 500, False)
        v = verdicts.build(lab_run(fill, get))
        fill_row = rows_by_check(v)["fill: every key stored"]
        self.assertEqual(("fail", "performance", "990 of 1 000 keys stored (10 PUTs failed)"),
                         (fill_row["status"], fill_row["gate"], fill_row["observed"]))
        self.assertEqual(gate.FAILED, gate.exit_code(v, "all"))
        self.assertEqual(0, gate.exit_code(v, "data"), "a key never acknowledged is not data lost")

    def test_a_phase_that_falls_behind_or_fails_requests_misses_the_slo(self):
        slow = phase("put", 0.4, 1000, False)
        slow["result"] |= {"achieved_rate": 900.0, "error_rate": 0.05}
        v = verdicts.build(lab_run(slow))
        self.assertEqual("fail", v["rows"][0]["status"])
        self.assertEqual("The phase missed the SLO: put (900 of 1 000/s, 5.00% failed).", v["answer"])

    def test_an_outage_phase_answers_by_recovery_healing_and_ledger_not_by_the_slo(self):
        outage = phase("mixed", 50.0, 500, False)
        outage |= {"label": "outage", "fault": {"kind": "pause", "node": "n2", "at_s": 10, "for_s": 10, "began_at_s": 10.0,
                                                  "ended_at_s": 20.0, "what": "node n2 paused"},
                   "heal": {"timeout_s": 120, "healed": True, "hints_replayed_s": 0.5, "repaired_s": 8.0}}
        outage["ledger"] = {"acknowledged_writes": 4000, "acknowledged_deletes": 100, "checked": True, "why_not_checked": None,
                            "keys_checked": 3000, "lost": 0, "lost_examples": [], "reads_checked": 2500, "stale_reads": 0}
        v = verdicts.build(lab_run(phase("put", 0.4, 500, False), outage))
        rows = rows_by_check(v)
        self.assertNotIn("outage", rows, "the outage is not held to the SLO")
        self.assertEqual("info", rows["outage: rate, p99, failed while faults came and went"]["status"])
        lost = rows["outage: acknowledged writes lost"]
        self.assertEqual(("pass", "data"), (lost["status"], lost["gate"]))
        self.assertEqual("0 of 4 100 (4 000 writes, 100 deletes; 3 000 keys read back)", lost["observed"])
        self.assertEqual("0 of 2 500 reads checked", rows["outage: stale reads"]["observed"])
        self.assertTrue(v["passed"])
        self.assertIn("outage: 1 fault of n2", v["answer"])
        self.assertIn("0 of 4 100 acknowledged writes lost", v["answer"])
        self.assertEqual(["put"], [t["phase"] for t in v["thresholds"] if t["gated"]])

    def test_an_acknowledged_write_lost_fails_the_data_gate_and_names_examples(self):
        p = {"label": "faults", "fault": {"kind": "kill", "node": "n1"}, "ledger": {
            "acknowledged_writes": 10, "acknowledged_deletes": 2, "checked": True, "keys_checked": 12, "lost": 2,
            "lost_examples": [{"key": "k7", "op": "put", "expected": "v3", "found": "none"},
                              {"key": "k9", "op": "delete", "expected": "none", "found": "v1"}],
            "reads_checked": 40, "stale_reads": 1}}
        lost, stale = ledger.rows(p)
        self.assertEqual(("fail", "data"), (lost["status"], lost["gate"]))
        self.assertEqual("2 of 12 (10 writes, 2 deletes; 12 keys read back); put k7: expected v3, found none; "
                         "delete k9: expected none, found v1", lost["observed"])
        self.assertEqual(("fail", "1 of 40 reads checked"), (stale["status"], stale["observed"]))
        p["ledger"] |= {"checked": False, "why_not_checked": "node n1 did not answer", "stale_reads": None}
        (unchecked,) = ledger.rows(p)
        self.assertEqual(("fail", "data", "not checked (12 acknowledged): node n1 did not answer"),
                         (unchecked["status"], unchecked["gate"], unchecked["observed"]), "a ledger that proved nothing fails")
        p["ledger"] |= {"why_not_checked": "the ledger was off (LEDGER_RATE or LEDGER_KEYS 0)", "rate": 0}
        (off,) = ledger.rows(p)
        self.assertEqual(("info", "none"), (off["status"], off["gate"]), "a ledger the user turned off fails nothing")
        self.assertEqual([], ledger.rows({"label": "get"}), "a phase that breaks nothing keeps no ledger")

    def test_thresholds_recorded_with_their_values_are_shown_as_k6_held_them(self):
        r = phase("get", 0.4, 500, False)["result"]
        r["thresholds"] = {"http_req_failed": True, "http_req_waiting": False, "http_reqs{status:200}": True}
        r["threshold_values"] = {
            "http_req_failed": {"rate<0.01": {"observed": 0.5, "ok": True}},
            "http_req_waiting": {"p(95)<5": {"observed": 7.25, "ok": False}},
            "http_reqs{status:200}": {"count>=0": {"observed": 3, "ok": True}},
        }
        table = thresholds.table(lab_run({"label": "get", "scenario": "get", "result": r}), ["get"])
        self.assertEqual(
            [("http_req_failed rate<0.01", "0.10%", True), ("http_req_waiting p(95)<5", "7.25 ms", False)],
            [(t["threshold"], t["observed"], t["ok"]) for t in table],
            "the failed share from the result (right for merged pods), others as recorded; no bookkeeping",
        )
        r["pods"] = [{"pod": "a"}, {"pod": "b"}]
        table = thresholds.table(lab_run({"label": "get", "scenario": "get", "result": r}), [])
        self.assertEqual("–", table[1]["observed"], "one pod's value is not the phase's")
        self.assertEqual([], thresholds.rows(table), "no phase held to the SLO: nothing gates")


class DispatchTest(unittest.TestCase):
    def test_a_kind_without_a_builder_is_refused_and_a_new_builder_adds_a_kind(self):
        run = lab_run(phase("put", 0.4, 500, False)) | {"kind": "drill"}
        with self.assertRaisesRegex(ValueError, "no verdict for a run of kind 'drill'"):
            verdicts.build(run)

        def drill(r: dict) -> Part:
            return Part("kvlab drill", "Did the drill run?", "It did.", [row("drill", "ran", "runs", True, "data")])

        verdicts.BUILDERS["drill"] = drill
        self.addCleanup(verdicts.BUILDERS.pop, "drill")
        v = verdicts.build(run)
        self.assertEqual(("drill", "kvlab drill", True), (v["kind"], v["title"], v["passed"]))
        self.assertEqual(["put"], [t["phase"] for t in v["thresholds"]])
        self.assertFalse(v["thresholds"][0]["gated"], "only a builder's phases held to the SLO gate")

    def test_the_gate_modes(self):
        rows = [row("a", "", "", False, "performance"), row("b", "", "", True, "data"), row("c", "", "", False, "none")]
        v = {"rows": rows}
        self.assertEqual((gate.FAILED, 0, 0), tuple(gate.exit_code(v, m) for m in gate.MODES))
        rows[1]["status"] = "fail"
        self.assertEqual((gate.FAILED, gate.FAILED, 0), tuple(gate.exit_code(v, m) for m in gate.MODES))


class CheckTest(unittest.TestCase):
    """What `lab check` asks of each kind's verdict, from the run's data."""

    EXPECTED = {
        "faults": ["faults: n2 killed", "faults: n2 paused", "faults: n2 cut off", "faults: the cluster healed",
                   "faults: acknowledged writes lost"],
        "saturation": ["highest rate sustained within the SLO"],
        "k8s-lab": ["put", "get", "mixed", "get@wrk", "highest rate sustained within the SLO"],
        "hotpath": ["GET at 10 000/s: server CPU per request", "GET at 20 000/s: server CPU per request",
                    "PUT at 15 000/s: server CPU per request"],
        "scale": ["100 000 keys", "1 000 000 keys", "10 000 000 keys", "the node survived"],
    }

    def test_each_kind_must_have_a_row_for_everything_it_is_judged_on(self):
        for name, expected in self.EXPECTED.items():
            run = fixture(name)
            kind = verdicts.kind_of(run)
            self.assertEqual(expected, checkverdict.expected_checks(run, kind), name)
            checks = [r["check"] for r in verdicts.build(run)["rows"]]
            self.assertTrue(all(any(c.startswith(e) for c in checks) for e in expected), name)

    def test_each_kind_has_its_own_title(self):
        titles = {name: verdicts.build(fixture(name))["title"] for name in self.EXPECTED}
        self.assertEqual(len(titles), len(set(titles.values())))
        for name, title in titles.items():
            run = fixture(name)
            self.assertEqual([], checkverdict.title_problems(run, verdicts.kind_of(run), f"# {title}"), name)
        self.assertTrue(checkverdict.title_problems(fixture("faults"), "faults", "# " + titles["k8s-lab"]))


class CommandTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)

    def main(self, *argv: str) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = cli.main(list(argv))
        return code, out.getvalue()

    def test_report_prints_the_verdict_and_gates_only_when_asked(self):
        d = write_run(self.root, "20260101-000000-lab", 2.0)  # p99 over the SLO in every phase
        code, out = self.main("report", str(d))
        self.assertEqual(0, code)
        self.assertIn("verdict: kvlab fixed-rate phases: 1 node, replicas 1/1, k6 at 1 000–2 000/s\n", out)
        self.assertIn("  FAILED (gates performance) put: 995 of 1 000/s (99.5%), p99 20.5 ms, 0.10% failed", out)
        self.assertIn("gate none: the verdict failed; reporting only", out)
        code, out = self.main("report", str(d), "--gate", "all")
        self.assertEqual(gate.FAILED, code)
        self.assertIn(f"gate all: FAILED, 2 rows that gate performance failed; see {d}/report.html", out)
        self.assertEqual((0, True), (lambda c, o: (c, "gate data: passed" in o))(*self.main("report", str(d), "--gate", "data")))
        verdict = json.loads((d / "verdict.json").read_text())
        self.assertFalse(verdict["passed"])
        self.assertEqual(["put", "get"], [r["check"] for r in verdict["rows"] if r["status"] == "fail"])

    def test_a_run_without_a_verdict_fails_a_gate(self):
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(1, gate.judge(self.root, "data"))
            self.assertEqual(0, gate.judge(self.root, "none"))

    def test_the_verdict_is_a_function_of_the_run(self):
        run = fixture("faults")
        self.assertEqual(verdicts.build(copy.deepcopy(run)), verdicts.build(run))


if __name__ == "__main__":
    unittest.main()
