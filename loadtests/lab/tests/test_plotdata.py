"""Self-tests of what the report's time-series and spectrum figures draw: which seconds the load ran
for whole (lab.loadseries, lab.recovery), the latency the nodes measured per interval, read from
their request histograms (lab.promhist, lab.nodeseries, lab.timeseries), the profiler's windows and
the load's span on the time axis (lab.report.timeline), and the figures themselves
(lab.report.plots, lab.report.seriesplot): percentile labels that never touch, the partial seconds
left out, the shading on every panel. The node page is recorded from a real node (fixtures/)."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from lab import loadseries, nodeseries, promhist, promtext, recovery, timeseries
from lab.loadseries import K6Reader, LoadSeries
from lab.report import plots, seriesplot, timeline
from lab.tests.test_timeseries import K6_HEADER, T0, k6_rows, wrk_part

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REQUESTS = nodeseries.REQUESTS
BOUNDS = [5e-05, 0.001048576, 0.001398101, 0.009786708, 0.011184809, float("inf")]


def requests_page(counts: dict[float, float], op: str = "get") -> dict[str, float]:
    """A node page with only the request histogram: cumulative counts by bound (every BOUNDS entry
    at least the count below it)."""
    page, running = {}, 0.0
    for le in BOUNDS:
        running = max(running, counts.get(le, running))
        bound = "+Inf" if le == float("inf") else repr(le)
        page[f'{REQUESTS}_bucket{{application="kvlab",operation="{op}",status="200",le="{bound}"}}'] = running
    return page


class PartialSecondsTest(unittest.TestCase):
    def test_k6s_first_and_last_seconds_are_partial_when_the_load_ran_part_of_them(self):
        # Sent from second 0.3 to 3.2, 10 a second, each answered in 5 ms: the first second lacks
        # 0.3 s of load, the last holds the answers to the requests of 3.0-3.2 only.
        lines = [K6_HEADER]
        for i in range(30):
            sent = 0.3 + i / 10
            lines += k6_rows(sent + 0.005, 5.0, op="get" if i % 2 else "put")
        reader = K6Reader(T0)
        reader.read(line + "\n" for line in lines)
        series = reader.series(duration_s=3)
        self.assertEqual([(s["t"], s["requests"], s["partial"]) for s in series.seconds],
                         [(0, 7, True), (1, 10, False), (2, 10, False), (3, 3, True)])
        self.assertEqual([s["partial"] for s in series.ops["get"]], [True, False, False, True])
        part = series.part()
        self.assertAlmostEqual(part["began_s"], 0.3, places=3)
        self.assertAlmostEqual(part["ended_s"], 3.2, places=3)

    def test_a_wrk_phases_last_second_is_partial(self):
        part = wrk_part(T0 * 1000, [100, 100, 100, 4], [0, 0, 0, 0]) | {"duration_s": 3.001}
        series = loadseries.from_wrk([part], T0, "wrk", duration_s=3)
        self.assertEqual([s["partial"] for s in series.seconds], [False, False, False, True])
        self.assertEqual((series.part()["began_s"], series.part()["ended_s"]), (0.0, 3.001))

    def test_recovery_reads_no_partial_second(self):
        steady = {"requests": 100, "errors": 0, "p99_ms": 2.0}
        rows = [steady] * 10 + [{"requests": 100, "errors": 40, "p99_ms": 900.0}] * 5 + [steady]
        rows += [{"requests": 4, "errors": 0, "p99_ms": 500.0, "partial": True}]  # the load's last answers
        series = {"interval_s": 1.0, "load": {"latency": True, "seconds": [r | {"t": t} for t, r in enumerate(rows)]}}
        [figures] = recovery.of_phase(series, [{"began_at_s": 10.0, "ended_at_s": 15.0}], 100)
        self.assertEqual(figures["p99_after_ms"], 2.0, "the stragglers' 500 ms are not the cluster's p99 after")


class ServerLatencyTest(unittest.TestCase):
    def test_the_recorded_pages_request_histogram_adds_up_its_operations(self):
        page = promtext.parse((FIXTURES / "prometheus-requests.txt").read_text())
        cumulative = promhist.cumulative(page, REQUESTS)
        self.assertEqual(cumulative[float("inf")], 51)  # 50 GETs and a PUT
        self.assertEqual(cumulative[0.001048576], 12)
        self.assertIsNone(promhist.cumulative(page, "kvlab_nothing_seconds"))

    def test_what_a_scrape_added_and_its_quantiles_within_a_bucket(self):
        page = promtext.parse((FIXTURES / "prometheus-requests.txt").read_text())
        before = promhist.cumulative(page, REQUESTS)
        # 100 more requests, all in (1.048576, 1.398101] ms.
        after = {le: n + (100 if le >= 0.001398101 else 0) for le, n in before.items()}
        added = promhist.increase(before, after)
        self.assertEqual(added, {(0.001048576, 0.001398101): 100})
        self.assertAlmostEqual(promhist.quantile(added, 0.5), 0.001048576 + 0.5 * (0.001398101 - 0.001048576))
        self.assertAlmostEqual(promhist.quantile(added, 0.99), 0.001048576 + 0.99 * (0.001398101 - 0.001048576))
        # A node that started again counts from zero: what its page holds is all it answered since.
        restarted = {le: min(n, 5.0) for le, n in before.items()}
        self.assertEqual(sum(promhist.increase(before, restarted).values()), 5)
        self.assertIsNone(promhist.increase(None, after))

    def test_a_quantile_beyond_the_largest_bound_is_that_bound_and_nothing_has_none(self):
        self.assertEqual(promhist.quantile({(0.001, 0.002): 1, (10.0, float("inf")): 99}, 0.99), 10.0)
        self.assertIsNone(promhist.quantile({}, 0.5))

    def sampler(self, pages: list[dict], times: list[float]) -> nodeseries.Sampler:
        feed, clock = iter(pages), iter(t for t in times for _ in (0, 1))  # a scrape reads the clock twice
        sampler = nodeseries.Sampler(lambda: next(feed), clock=lambda: next(clock))
        for _ in pages:
            sampler.sample()
        return sampler

    def test_every_nodes_requests_of_an_interval_together(self):
        # n0 answers 90 requests in (1.05, 1.40] ms, n1 10 in (9.79, 11.18] ms, then nothing.
        fast, slow = {0.001398101: 90}, {0.011184809: 10}
        pages = [{"n0": requests_page({}), "n1": requests_page({})},
                 {"n0": requests_page(fast), "n1": requests_page(slow)},
                 {"n0": requests_page(fast), "n1": requests_page(slow)}]
        server = self.sampler(pages, [T0 - 0.5, T0 + 0.5, T0 + 1.5]).server_part(T0)
        [first, second] = server["seconds"]
        self.assertEqual((first["t"], first["requests"]), (-0.5, 100))
        self.assertTrue(1.048 < first["p50_ms"] < 1.399, first)
        self.assertTrue(9.786 < first["p99_ms"] < 11.185, first)
        self.assertEqual(second, {"t": 0.5, "span_s": 1.0, "requests": 0, "p50_ms": None, "p99_ms": None})
        self.assertIn("measured by the nodes", server["note"])

    def test_nodes_that_timed_no_request_leave_the_server_part_null(self):
        bare = {"n0": {"process_cpu_time_ns_total": 1e9}}
        self.assertIsNone(self.sampler([bare, bare], [T0, T0 + 1]).server_part(T0))
        idle = {"n0": requests_page({})}
        self.assertIsNone(self.sampler([idle, idle], [T0, T0 + 1]).server_part(T0), "the status route is not timed")

    def test_the_written_server_intervals_the_load_did_not_cover_are_partial(self):
        class Samples:
            def series(self, t0_epoch):
                return LoadSeries("wrk", False, [], began_s=0.3, ended_s=2.2)

            def discard(self):
                pass

        # Scrapes late on a busy machine: the second interval lasts 1.15 s and still ends before the load.
        pages = [{"n0": requests_page({0.001398101: n})} for n in (0, 10, 20, 30)]
        sampler = self.sampler(pages, [T0 + 0.01, T0 + 1.01, T0 + 2.16, T0 + 3.01])
        with tempfile.TemporaryDirectory() as tmp:
            timeseries.write(Path(tmp), T0, Samples(), sampler)
            doc = json.loads((Path(tmp) / "timeseries.json").read_text())
        self.assertEqual([(s["t"], s["span_s"], s["requests"], s["partial"]) for s in doc["server"]["seconds"]],
                         [(0.01, 1.0, 10, True), (1.01, 1.15, 10, False), (2.16, 0.85, 10, True)])


PROFILES = [
    {"node": n, "event": e, "offset_s": o, "seconds": 3.0, "ok": True} for e, o in (("cpu", 2.0), ("alloc", 5.0))
    for n in ("n0", "n1")
] + [{"node": "n0", "event": "lock", "offset_s": 8.0, "seconds": 1.0, "ok": False},  # attach failed
     {"node": "-", "event": "wall", "offset_s": 0, "seconds": 0, "ok": False}]  # the profiling thread failed


class TimelineTest(unittest.TestCase):
    def test_one_window_per_profile_taken_whatever_the_nodes(self):
        self.assertEqual(timeline.profile_windows({"profiles": PROFILES}), [("cpu", 2.0, 5.0), ("alloc", 5.0, 8.0)])
        self.assertEqual(timeline.profile_windows({}), [])

    def test_the_loads_span_as_recorded_else_from_the_phase(self):
        recorded = {"load": {"began_s": 0.2, "ended_s": 30.1, "seconds": []}}
        self.assertEqual(timeline.load_span(recorded, {"scenario": "get"}), (0.2, 30.1))
        older = {"load": {"seconds": [{"t": t} for t in range(31)]}}
        self.assertEqual(timeline.load_span(older, {"scenario": "get", "result": {"duration_s": 30}}), (0.0, 30.0))
        self.assertEqual(timeline.load_span({"load": None}, {"scenario": "get", "spec": {"duration_s": 20}}), (0.0, 20.0))
        # A fill ends when its keys are written: its last second is the one it ended in.
        self.assertEqual(timeline.load_span(older, {"scenario": "fill", "spec": {"duration_s": 900}}), (0.0, 30.0))
        self.assertIsNone(timeline.load_span({"load": None}, {"scenario": "fill"}))
        rows = [{"t": t} for t in (-0.5, 0.5, 1.5)]
        self.assertEqual(timeline.whole(rows, (0.2, 2.6), 1.0), [{"t": 0.5}, {"t": 1.5}])
        self.assertEqual(timeline.whole(rows, None, 1.0), rows)


def spectrum(requests: int) -> list:
    return [[1 - 10 ** -k, k + 1.0] for k in range(0, 8)] + [[1.0, 20.0]]


class FiguresTest(unittest.TestCase):
    def test_the_spectrums_percentile_labels_never_touch_and_end_where_the_requests_do(self):
        for requests in (2, 150, 3_001, 15_001, 30_021, 600_648, 9_000_049):
            fig = plots.spectrum_figure("t", [("all", spectrum(requests), requests, {})], 10)
            fig.canvas.draw()
            ax = fig.axes[0]
            labels = [t for t in ax.xaxis.get_ticklabels() if t.get_text()]
            boxes = [t.get_window_extent() for t in labels]
            for a, b in zip(boxes, boxes[1:]):
                self.assertLess(a.x1, b.x0, f"{requests} requests: {[t.get_text() for t in labels]}")
            self.assertEqual(labels[-1].get_text(), plots.percentile_label(requests))
            self.assertIn("50%", [t.get_text() for t in labels])
            self.assertEqual(ax.get_lines()[0].get_xdata()[-1], requests, "the maximum is drawn where the axis ends")
            plots.plt.close(fig)

    def test_a_log_axis_of_less_than_a_decade_is_labelled_in_plain_numbers(self):
        fig, ax = plots.plt.subplots()
        ax.plot([0, 1], [0.25, 2.2])
        ax.set_yscale("log")
        plots.log_axis(ax.yaxis)
        fig.canvas.draw()
        texts = [t.get_text() for t in ax.yaxis.get_ticklabels(minor=True) + ax.yaxis.get_ticklabels() if t.get_text()]
        self.assertIn("2", texts)
        self.assertFalse([t for t in texts if "10^" in t or "times" in t or "e" in t], texts)
        plots.plt.close(fig)

    def series(self) -> dict:
        """A wrk phase of 10 s (its last second partial), three node samples a second, its latency
        from the nodes."""
        seconds = [{"t": t, "requests": 100, "errors": 0} for t in range(10)] + [{"t": 10, "requests": 3, "errors": 0}]
        nodes = {n: [{"t": t + 0.01, "cpu_cores": 0.5, "gc_pause_ms": 1.0} for t in range(11)] for n in ("n0", "n1")}
        server = [{"t": t + 0.01, "requests": 100, "p50_ms": 0.4, "p99_ms": 2.0} for t in range(11)]
        return {"interval_s": 1.0,
                "load": {"source": "wrk", "latency": False, "began_s": 0.0, "ended_s": 10.002, "seconds": seconds},
                "nodes": nodes, "events": [{"t": 4.5, "node": "n0", "kind": "flush"}],
                "server": {"source": REQUESTS, "note": "", "seconds": server}}

    def test_a_wrk_phase_has_its_latency_from_the_nodes(self):
        ts = self.series()
        self.assertEqual(seriesplot.panels(ts), ["rate", "latency", "errors", "cpu", "gc", "events"])
        self.assertEqual(seriesplot.panels(ts | {"load": None}), ["rate", "latency", "cpu", "gc", "events"])
        self.assertEqual(seriesplot.panels(ts | {"server": None}), ["rate", "errors", "cpu", "gc", "events"])

    def test_partial_seconds_are_left_out_and_profiles_faults_and_idle_time_shaded_on_every_panel(self):
        fault = {"kind": "pause", "node": "n1", "began_at_s": 6.0, "ended_at_s": 7.0}
        phase = {"scenario": "get", "profiles": PROFILES, "faults": [fault]}
        fig = seriesplot.timeseries_figure("t", self.series(), phase, 100, 10)
        rate, latency, *others = fig.axes
        [achieved] = [line for line in rate.get_lines() if line.get_label() == "achieved"]
        self.assertEqual(list(achieved.get_xdata()), list(range(11)), "seconds 0-9, the partial 10th left out")
        nodes_p99 = next(line for line in latency.get_lines() if line.get_label() == "p99, at the nodes")
        self.assertEqual(nodes_p99.get_xdata()[-2], 9.01, "the nodes' last interval ran past the load's end")
        for ax in fig.axes:
            spans = {(round(p.get_x(), 3), round(p.get_x() + p.get_width(), 3)) for p in ax.patches
                     if p.get_height() == 1}
            self.assertLessEqual({(2.0, 5.0), (5.0, 8.0), (6.0, 7.0), (10.002, 11.01)}, spans, ax.get_ylabel())
        legend = [t.get_text() for t in rate.get_legend().get_texts()]
        self.assertEqual(legend[-3:], ["load not running", "profiler: cpu", "profiler: alloc"])
        plots.plt.close(fig)

    def test_without_the_load_tools_seconds_the_rate_is_what_the_nodes_answered_per_second(self):
        ts = self.series() | {"load": None}
        ts["server"]["seconds"][4] |= {"span_s": 1.25, "requests": 150}  # a late scrape: 150 in 1.25 s
        fig = seriesplot.timeseries_figure("t", ts, {"scenario": "get", "spec": {"duration_s": 10}}, 100, 10)
        [answered] = [line for line in fig.axes[0].get_lines() if line.get_label() == "answered by the nodes"]
        self.assertEqual(list(answered.get_ydata()[3:6]), [100.0, 120.0, 100.0])
        plots.plt.close(fig)


if __name__ == "__main__":
    unittest.main()
