"""The scale benchmark's pure parts: sizes, the figures' arithmetic from synthetic counter
readings, the chart's memory settings and the cgroup plan, the fill marker, and the report's scale
section rendered from a synthetic run (every figure in it, and lab check noticing what is missing)."""

from __future__ import annotations

import json
import shutil
import tempfile
import unittest
from pathlib import Path

from lab import check, memlimit, promtext, report, scale, scalefigures
from lab.tests.test_lab import write_run

PAGE = """# HELP kvlab_rocksdb_block_cache_hits_total hits
kvlab_rocksdb_block_cache_hits_total{block="data"} {data_hits}
kvlab_rocksdb_block_cache_hits_total{block="index"} 50
kvlab_rocksdb_block_cache_hits_total{block="filter"} 50
kvlab_rocksdb_block_cache_misses_total{block="data"} {data_misses}
kvlab_rocksdb_block_cache_misses_total{block="index"} 0
kvlab_rocksdb_block_cache_misses_total{block="filter"} 0
kvlab_storage_reads_total{tier="cache"} {cache}
kvlab_storage_reads_total{tier="disk"} {disk}
kvlab_rocksdb_flush_bytes_total {flush}
kvlab_rocksdb_compaction_bytes_total {compaction}
jvm_memory_used_bytes{area="heap",id="G1 Eden Space"} 100
jvm_memory_used_bytes{area="heap",id="G1 Old Gen"} 200
jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 5000
jvm_memory_max_bytes{area="heap",id="G1 Eden Space"} -1
jvm_memory_max_bytes{area="heap",id="G1 Old Gen"} 536870912
kvlab_rocksdb{property="block-cache-usage"} 1234
kvlab_rocksdb{property="estimate-num-keys"} 99
"""


def page(**v) -> dict:
    text = PAGE
    for k, x in v.items():
        text = text.replace("{" + k + "}", str(x))
    return promtext.parse(text)


class SizesTest(unittest.TestCase):
    def test_sizes_take_k_and_m_and_must_grow(self):
        self.assertEqual(scalefigures.parse_sizes("100k,1M,10M"), [100_000, 1_000_000, 10_000_000])
        self.assertEqual(scalefigures.parse_sizes(" 20k , 60000,1.5M"), [20_000, 60_000, 1_500_000])
        for bad in ("1M,100k", "20k,20k", "abc", "0", "", "10G", "-5"):
            with self.assertRaises(ValueError, msg=bad):
                scalefigures.parse_sizes(bad)

    def test_sizes_are_named_as_written(self):
        self.assertEqual([scalefigures.short(n) for n in (100_000, 1_000_000, 1_500_000, 20_000, 1234)],
                         ["100k", "1M", "1.5M", "20k", "1234"])


class FiguresTest(unittest.TestCase):
    def test_hit_rates_are_shares_of_the_counter_deltas(self):
        before = scalefigures.counters(page(data_hits=1000, data_misses=1000, cache=10, disk=10, flush=0, compaction=0))
        after = scalefigures.counters(page(data_hits=1900, data_misses=1300, cache=760, disk=260, flush=0, compaction=0))
        rates = scalefigures.hit_rates(before, after)
        self.assertAlmostEqual(rates["data_hit_rate"], 900 / 1200)
        self.assertAlmostEqual(rates["all_hit_rate"], 900 / 1200)  # index and filter did not move
        self.assertAlmostEqual(rates["event_loop_share"], 750 / 1000)

    def test_a_metric_the_node_does_not_export_is_none_never_a_number(self):
        bare = scalefigures.counters(promtext.parse("jvm_memory_used_bytes{area=\"heap\"} 7\n"))
        self.assertIsNone(bare["hits.data"])
        self.assertIsNone(bare["property.estimate-table-readers-mem"])
        self.assertEqual(bare["heap_used"], 7)
        rates = scalefigures.hit_rates(bare, bare)
        self.assertEqual(set(rates.values()), {None})
        unread = scalefigures.counters("http://127.0.0.1:1/actuator/prometheus: refused")
        self.assertEqual(set(unread.values()), {None})
        amp = scalefigures.write_amplification(None, None, unread, unread, 1000, 1024)
        self.assertIsNone(amp["write_amplification"])
        self.assertIsNone(amp["rocksdb_write_amplification"])

    def test_write_amplification_is_bytes_written_per_value_byte(self):
        before = scalefigures.counters(page(data_hits=0, data_misses=0, cache=0, disk=0, flush=1000, compaction=0))
        after = scalefigures.counters(page(data_hits=0, data_misses=0, cache=0, disk=0, flush=2_049_000, compaction=1_024_000))
        amp = scalefigures.write_amplification(10_000, 10_000 + 3_072_000, before, after, 1000, 1024)
        self.assertEqual(amp["value_bytes"], 1_024_000)
        self.assertAlmostEqual(amp["write_amplification"], 3.0)
        self.assertAlmostEqual(amp["rocksdb_write_amplification"], 3.0)
        self.assertEqual(amp["flush_bytes"], 2_048_000)

    def test_heap_is_the_heap_pools_summed(self):
        c = scalefigures.counters(page(data_hits=0, data_misses=0, cache=0, disk=0, flush=0, compaction=0))
        self.assertEqual(c["heap_used"], 300)
        self.assertEqual(c["heap_max"], 536870912)
        self.assertEqual(c["property.block-cache-usage"], 1234)

    def test_disk_use_walks_the_directory(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "a").write_bytes(b"x" * 100)
            (Path(tmp) / "sub").mkdir()
            (Path(tmp) / "sub" / "b").write_bytes(b"x" * 23)
            self.assertEqual(scalefigures.disk_bytes(Path(tmp)), 123)


VALUES = """\
hook:
  resources:
    limits:
      memory: 64Mi
# -- JVM options
javaOpts: "-XX:MaxRAMPercentage=50 -XX:+ExitOnOutOfMemoryError"
resources:
  requests:
    memory: 1Gi
  limits:
    memory: 768Mi   # the heap is a share of it
sidecar:
  resources:
    limits:
      memory: 64Mi
"""


class MemoryLimitTest(unittest.TestCase):
    def test_the_chart_values_are_the_top_level_ones(self):
        self.assertEqual(memlimit.chart_memory(VALUES), ("-XX:MaxRAMPercentage=50 -XX:+ExitOnOutOfMemoryError", "768Mi"))
        with self.assertRaises(ValueError):
            memlimit.chart_memory("hook:\n  javaOpts: x\n")

    def test_the_real_chart_has_both(self):
        java_opts, limit = memlimit.chart_memory(memlimit.chart_values().read_text())
        self.assertIn("MaxRAMPercentage", java_opts)
        self.assertGreater(memlimit.parse_bytes(limit), 0)

    def test_quantities(self):
        self.assertEqual(memlimit.parse_bytes("1Gi"), 1 << 30)
        self.assertEqual(memlimit.parse_bytes("512Mi"), 512 << 20)
        self.assertEqual(memlimit.parse_bytes("2G"), 2_000_000_000)
        for bad in ("1Xi", "lots", ""):
            with self.assertRaises(ValueError):
                memlimit.parse_bytes(bad)

    def plan(self, limit: str, controllers: str | None, root: bool):
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp, True)
        values = tmp / "values.yaml"
        values.write_text(VALUES)
        mount = tmp / "cgroup"
        mount.mkdir()
        if controllers is not None:
            (mount / "cgroup.subtree_control").write_text(controllers + "\n")
        return memlimit.plan(limit, values, mount, root), mount

    def test_a_cgroup_with_the_memory_controller_enforces_the_limit(self):
        p, mount = self.plan("helm", "cpu io memory pids", True)
        self.assertTrue(p.enforced)
        self.assertEqual(p.limit_bytes, 768 << 20)
        self.assertNotIn("-Xmx", p.java_options)
        self.assertEqual(p.cgroup.parent, mount)
        p.cgroup.mkdir()  # as the kernel makes it, with its files
        (p.cgroup / "memory.current").write_text("1000\n")
        (p.cgroup / "memory.peak").write_text("2000\n")
        (p.cgroup / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
        self.assertEqual(memlimit.cgroup_memory(p.cgroup), {"current": 1000, "peak": 2000, "oom": 1, "oom_kill": 1})

    def test_making_the_cgroup_sets_the_limit(self):
        p, mount = self.plan("2Gi", "memory", True)
        self.assertEqual(p.limit_bytes, 2 << 30)
        memlimit.make_cgroup(p)
        self.assertEqual((p.cgroup / "memory.max").read_text(), str(2 << 30))
        # A directory is no cgroup: it has no memory.swap.max, as a kernel without swap accounting.
        self.assertIn("no swap accounting", " ".join(p.notes))
        self.assertEqual(memlimit.cgroup_memory(None), {"current": None, "peak": None, "oom": None, "oom_kill": None})

    def test_on_a_hybrid_host_the_cgroup_v1_memory_hierarchy_is_found_under_our_own_cgroup(self):
        mountinfo = (
            "30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n"
            "34 25 0:30 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
            "35 25 0:31 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
        )
        own = "4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n"
        self.assertEqual(memlimit.memory_cgroup_v1(mountinfo, own), Path("/sys/fs/cgroup/memory/process_api/abc"))
        self.assertIsNone(memlimit.memory_cgroup_v1(mountinfo.splitlines()[0], own))

    def test_a_cgroup_v1_gets_the_limit_on_memory_and_swap_and_is_read_back(self):
        cg = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, cg, True)
        for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.usage_in_bytes"):
            (cg / name).write_text("0\n")  # as a v1 kernel makes a cgroup
        self.assertEqual(memlimit.set_limit(cg, 1 << 30), [])
        self.assertEqual((cg / "memory.limit_in_bytes").read_text(), str(1 << 30))
        self.assertEqual((cg / "memory.memsw.limit_in_bytes").read_text(), str(1 << 30))
        self.assertFalse((cg / "memory.max").exists())
        (cg / "memory.usage_in_bytes").write_text("1000\n")
        (cg / "memory.max_usage_in_bytes").write_text("2000\n")
        (cg / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
        self.assertEqual(memlimit.cgroup_memory(cg), {"current": 1000, "peak": 2000, "oom": None, "oom_kill": 1})

    def test_without_root_or_the_memory_controller_the_heap_is_capped_at_half(self):
        for controllers, root in (("cpu memory", False), ("cpu", True), (None, True)):
            p, _ = self.plan("helm", controllers, root)
            self.assertFalse(p.enforced)
            self.assertIn("-Xmx384m", p.java_options)
            self.assertTrue(p.why_not)
        p, _ = self.plan("none", "memory", True)
        self.assertIsNone(p.limit_bytes)
        self.assertFalse(p.enforced)
        self.assertNotIn("-Xmx", p.java_options)


class FillMarkerTest(unittest.TestCase):
    def test_a_reused_directory_fills_only_what_it_lacks(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            self.assertEqual(scale.filled_keys(d, 1024), 0)
            (d / scale.FILL_MARKER).write_text("100000 1024\n")
            self.assertEqual(scale.filled_keys(d, 1024), 100_000)
            with self.assertRaises(SystemExit):
                scale.filled_keys(d, 512)


def row(label: str, p99: float, us: float, ratio: float | None) -> dict:
    return {"label": label, "requested": 2000, "achieved": 1999.0, "p50": p99 / 5, "p99": p99, "server_cores": 0.1,
            "server_us": us, "ratio": ratio, "ratio_text": "", "loadgen_cores": 0.1, "others_cores": 0.0, "error_rate": 0.0}


def step(keys: int, p99: float, fill_rate: float | None, hits: float | None) -> dict:
    return {
        "keys": keys,
        "fill": None if fill_rate is None else {
            "from": 0, "keys": keys, "seconds": keys / fill_rate, "rate": fill_rate, "stored": keys, "failed": 0,
            "settle": {"settle_s": 4.0, "idle_cores": 0.01, "settled": True},
            "value_bytes": keys * 1024, "disk_write_bytes": keys * 1024 * 2.5, "write_amplification": 2.5,
            "flush_bytes": 1.0, "compaction_bytes": 2.0, "rocksdb_write_bytes": 3.0, "rocksdb_write_amplification": 1.75,
        },
        "get_cache": {"data_hit_rate": hits, "all_hit_rate": hits, "event_loop_share": hits},
        "rows": {"status": row("status", 0.5, 30.0, None), "get": row("get", p99, 70.0, 2.33), "put": row("put", 1.5, 90.0, 3.0)},
        "memory": {"heap_used": 100 << 20, "heap_max": 512 << 20, "rss": 700 << 20,
                   "cgroup": {"current": 800 << 20, "peak": 900 << 20, "oom": 0, "oom_kill": 0}},
        "disk_after_fill": {"bytes": int(keys * 1024 * 1.3), "wal_bytes": 1 << 20},
        "disk_bytes": int(keys * 1024 * 1.5),
        "properties": {"block-cache-usage": 64 << 20, "estimate-num-keys": keys, "estimate-table-readers-mem": None},
        "alive": True,
    }


def scale_doc(steps: list[dict], survived: bool = True) -> dict:
    return {
        "sizes": [s["keys"] for s in steps], "rate": 2000, "duration_s": 10, "warmup_s": 5, "value_size": 1024,
        "connections": 64, "fill_connections": 64,
        "memory": {"limit_bytes": 1 << 30, "limit": "1Gi", "java_options": "-XX:MaxRAMPercentage=50",
                   "source": "helm/kvlab/values.yaml", "enforced": True, "why_not": "", "cgroup": "/sys/fs/cgroup/kvlab-scale-1"},
        "node_command": "java -XX:MaxRAMPercentage=50 -jar kvlab.jar", "jar": "kvlab.jar (sha256 0)",
        "data_dir": "a temporary directory, removed after the run", "reused_keys": 0,
        "targets": {"min_fill_rate": 20000, "max_p99_growth": 2.0}, "steps": steps,
        "failure": "" if survived else "node n0 (pid 1) is gone after phase get@2000 at 1M",
        "exit_code": None if survived else 137,
        "cgroup_after": {"current": 0, "peak": 900 << 20, "oom": 0, "oom_kill": 0 if survived else 1},
        "survived": survived,
    }


class ScaleReportTest(unittest.TestCase):
    def render(self, doc: dict) -> tuple[Path, str]:
        root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, root, True)
        d = write_run(root, "20260101-000000-scale", 1.0)
        run = json.loads((d / "run.json").read_text())
        run["kind"] = "scale"
        run["scale"] = doc
        (d / "run.json").write_text(json.dumps(run))
        return d, report.generate(d)[0].read_text()

    def test_the_scale_section_shows_every_figure_per_size(self):
        d, md = self.render(scale_doc([step(20_000, 1.0, 45_000.0, 0.99), step(100_000, 1.5, 30_000.0, 0.8)]))
        self.assertTrue(md.startswith("# kvlab scale: 1 node, 20 000 to 100 000 keys of 1024 bytes"))
        self.assertIn("memory limit 1Gi (enforced)", md.splitlines()[0])
        self.assertIn("| 100 000 | 30 000 | 3.3 | 0 | 4 | 2.50 | 1.75 | 244.1 | 127.0 | 1.0 | 1.30 | 146.5 |", md)
        self.assertIn("| 100 000 | 0.100 | 0.500 | 30.0 | 1 999 | 0.300 | 1.50 | 70.0 | 2.33x | 1 999 | 0.300 | 1.50 | 90.0 | 3.00x |", md)
        self.assertIn("| 100 000 | 100 | 512 | 700 | 800 | 900 | 0 | 80.0% | 80.0% | 80.0% | yes |", md)
        box = md.split("</div>")[0]
        self.assertIn(
            "| 100 000 keys | fill 30 000 keys/s; GET p99 1.50 ms, 1.50× the smallest size's "
            "| fill ≥ 20 000 keys/s; GET p99 ≤ 2× the smallest size's | pass | performance |",
            box,
        )
        self.assertIn("| the node survived | still running and answering after the last size |", box)
        self.assertIn("**Passed.** From 20 000 to 100 000 keys GET p99 went from 1.00 to 1.50 ms (1.50×)", box)
        # The figures come right after the verdict, before the findings and the phases.
        self.assertLess(md.index("![scale: fill rate]"), md.index("## Findings"))
        self.assertIn("cgroup `/sys/fs/cgroup/kvlab-scale-1`", md)
        self.assertEqual(check.scale_problems(d, json.loads((d / "run.json").read_text()), md), [])

    def test_a_dead_node_a_slow_fill_and_missing_metrics_are_shown_not_invented(self):
        dead = step(1_000_000, 9.0, 12_000.0, None)
        del dead["rows"]["put"]
        dead["alive"] = False
        d, md = self.render(scale_doc([step(20_000, 1.0, 45_000.0, None), dead], survived=False))
        box = md.split("</div>")[0]
        self.assertIn(
            "| 1 000 000 keys | fill 12 000 keys/s; GET p99 9.00 ms, 9.00× the smallest size's "
            "| fill ≥ 20 000 keys/s; GET p99 ≤ 2× the smallest size's | **fail** | performance |",
            box,
        )
        self.assertIn("| the node survived | node n0 (pid 1) is gone after phase get@2000 at 1M;", box)
        self.assertIn("| no OOM kill, still running and answering | **fail** | data |", box)
        self.assertIn("**Failed.**", box)
        self.assertIn("exited with 137", md)
        self.assertIn("1 OOM kill(s)", md)
        self.assertIn("| 1 000 000 | 100 | 512 | 700 | 800 | 900 | 0 | – | – | – | **no** |", md)
        self.assertNotIn("nan", md.lower().replace("nano", ""))

    def test_check_notices_a_missing_figure_and_a_missing_row(self):
        d, md = self.render(scale_doc([step(20_000, 1.0, 45_000.0, 0.9), step(60_000, 1.1, 45_000.0, 0.9)]))
        run = json.loads((d / "run.json").read_text())
        (d / "plots" / "scale-cache.png").unlink()
        problems = check.scale_problems(d, run, md.replace("| 60 000 | 45 000 |", "| 60 001 | 45 000 |"))
        self.assertTrue(any("block-cache hit rates" in p for p in problems), problems)
        self.assertTrue(any("no row for 60000 keys" in p for p in problems), problems)


if __name__ == "__main__":
    unittest.main()
