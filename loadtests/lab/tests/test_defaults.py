"""The lab's knobs come from one file: defaults.env feeds the run's settings, the command line's
options and make's variables."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from lab import __main__ as cli
from lab import defaults, settings, tools


def knob_option(name: str) -> str:
    return "--" + name.lower().replace("_", "-")


class DefaultsFileTest(unittest.TestCase):
    def test_durations_lists_and_numbers_are_read_as_their_kind(self):
        self.assertEqual(90, defaults.duration("1m30s"))
        self.assertEqual(30, defaults.duration("30"))
        self.assertEqual(["fill", "put"], defaults.split(" fill, put ,"))
        for bad in ("30x", "5m3", "", "s"):
            with self.assertRaises(ValueError, msg=bad):
                defaults.duration(bad)

    def test_a_line_that_is_no_knob_is_refused_with_where_it_is(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "defaults.env"
            path.write_text("# a comment\nRATE=500\nrate=1\n")
            with self.assertRaises(ValueError) as e:
                defaults.read(path)
            self.assertIn("defaults.env:3", str(e.exception))

    def test_the_run_settings_take_their_defaults_from_the_file(self):
        cfg = settings.RunConfig(targets=[], pids=[])
        self.assertEqual(defaults.integer("RATE"), cfg.rate)
        self.assertEqual(defaults.seconds("WARMUP"), cfg.warmup_s)
        self.assertEqual(defaults.items("PHASES"), cfg.phases)
        self.assertEqual(defaults.items("EVENTS"), cfg.events)
        sat = settings.Saturation()
        self.assertEqual((defaults.text("SEARCH"), defaults.integer("SEARCH_STEPS")), (sat.scenario, sat.max_steps))


DURATIONS = ("DURATION", "WARMUP", "HEAL_TIMEOUT", "SEARCH_STEP", "REQUEST_TIMEOUT", "FILL_MAX_DURATION", "FILL_REQUEST_TIMEOUT",
             "SOAK_DURATION", "SOAK_WINDOW", "SOAK_SAMPLE")


def expected(name: str, value: str):
    """A knob's value from the file as the command line parses it."""
    if name in DURATIONS:
        return defaults.duration(value)
    if name in ("PHASES", "EVENTS"):
        return defaults.split(value)
    if name == "FAULTS":
        from lab import faults

        return faults.parse_schedule(value)
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


class CommandLineTest(unittest.TestCase):
    def parse(self, *argv: str):
        import argparse

        parsed = {}
        original = argparse.ArgumentParser.parse_args

        def capture(parser, args=None, namespace=None):
            parsed["a"] = original(parser, args, namespace)
            raise SystemExit(0)

        argparse.ArgumentParser.parse_args = capture
        try:
            with self.assertRaises(SystemExit):
                cli.main(list(argv))
        finally:
            argparse.ArgumentParser.parse_args = original
        return parsed["a"]

    def test_every_knob_is_an_option_of_every_run_command_with_the_file_default(self):
        import argparse

        from lab import commands
        from lab.scenarios import SCENARIOS

        subparsers = next(a for a in commands.parser("")._actions if a.dest == "command").choices
        for command in SCENARIOS:
            parsed = self.parse(command, "--targets", "http://127.0.0.1:1")
            hidden = {a.dest for a in subparsers[command]._actions if a.help == argparse.SUPPRESS}
            for name, value in defaults.VALUES.items():
                if name.startswith("K8S_") or (name == "PHASES" and command != "run"):
                    continue
                dest = name.lower()
                self.assertTrue(hasattr(parsed, dest), f"{command} has no {knob_option(name)} for {name}")
                if dest in hidden:  # taken from make, not used: kept as the text it is
                    self.assertEqual(value, getattr(parsed, dest), f"{command} {knob_option(name)}")
                else:
                    self.assertEqual(expected(name, value), getattr(parsed, dest), f"{command} {knob_option(name)}")

    def test_the_short_search_after_the_phases_can_be_left_out(self):
        self.assertEqual("none", self.parse("run", "--targets", "http://127.0.0.1:1", "--search", "none").search)


class ScriptsTest(unittest.TestCase):
    """The k6 and wrk scripts take a knob from the environment, else from defaults.env; with every
    knob in the environment they need no file."""

    KNOBS = ("RATE", "DURATION", "KEYS", "KEY_PREFIX", "VALUE_SIZE", "VUS", "MAX_VUS", "SLO_P99_MS",
             "REQUEST_TIMEOUT", "MAX_ERROR_RATE", "RANGE_SIZE", "READ_SHARE")

    def k6_options(self, script: str, env: dict) -> dict:
        k6 = tools.k6()
        if not Path(k6).exists():
            self.skipTest("no k6 (make lab-tools)")
        p = subprocess.run([k6, "inspect", "--include-system-env-vars", str(tools.LOADTESTS / "k6" / script)],
                           capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"} | env, cwd="/")
        if p.returncode:
            raise AssertionError(p.stderr)
        return json.loads(p.stdout)

    def test_k6_takes_its_defaults_from_the_file_and_the_environment_wins(self):
        main = self.k6_options("mixed.js", {})["scenarios"]["main"]
        self.assertEqual((defaults.integer("RATE"), defaults.text("DURATION"), defaults.integer("MAX_VUS")),
                         (main["rate"], main["duration"], main["maxVUs"]))
        options = self.k6_options("get.js", {})
        self.assertEqual([f"p(99)<{defaults.number('SLO_P99_MS'):g}"], options["thresholds"]["http_req_duration"])
        self.assertEqual(77, self.k6_options("put.js", {"RATE": "77"})["scenarios"]["main"]["rate"])
        fill = self.k6_options("fill.js", {})
        self.assertEqual(defaults.integer("BATCH"), fill["batch"])
        self.assertEqual(defaults.seconds("FILL_MAX_DURATION"), defaults.duration(fill["scenarios"]["main"]["maxDuration"]))

    def test_k6_runs_on_the_environment_alone_and_says_what_is_missing(self):
        env = {name: defaults.text(name) for name in self.KNOBS} | {"KVLAB_DEFAULTS": "/nonexistent", "RATE": "5"}
        self.assertEqual(5, self.k6_options("get.js", env)["scenarios"]["main"]["rate"])
        del env["KEYS"]
        with self.assertRaisesRegex(AssertionError, "KEYS is not set and the defaults file /nonexistent cannot be read"):
            self.k6_options("get.js", env)

    def wrk_knobs(self, env: dict) -> str:
        try:
            wrk = tools.wrk()
        except SystemExit as e:
            self.skipTest(str(e))
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "knobs.lua"
            script.write_text(
                f'local kvlab = dofile("{tools.LOADTESTS / "wrk2" / "kvlab.lua"}")\n'
                'io.write(string.format("%d %s %d %d [%s]\\n", kvlab.keys, kvlab.prefix, kvlab.value_size, '
                "kvlab.range_size, kvlab.replicas_param))\nos.exit(0)\n"
            )
            p = subprocess.run([wrk.path, "-t1", "-c1", "-d1s", "-s", str(script), "http://127.0.0.1:1"],
                               capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"} | env, timeout=30)
        return (p.stdout + p.stderr).strip()

    def test_wrk_takes_its_defaults_from_the_file_and_the_environment_wins(self):
        d = defaults.text
        self.assertEqual(f"{d('KEYS')} {d('KEY_PREFIX')} {d('VALUE_SIZE')} {d('RANGE_SIZE')} []", self.wrk_knobs({}))
        self.assertEqual(f"7 {d('KEY_PREFIX')} {d('VALUE_SIZE')} {d('RANGE_SIZE')} [&replicas=2/3]",
                         self.wrk_knobs({"KEYS": "7", "REPLICAS": "2/3"}))
        self.assertIn("KEYS is not set and the defaults file /nonexistent cannot be read",
                      self.wrk_knobs({"KVLAB_DEFAULTS": "/nonexistent"}))
        alone = {"KVLAB_DEFAULTS": "/nonexistent", "KEYS": "3", "KEY_PREFIX": "x", "VALUE_SIZE": "8", "RANGE_SIZE": "2"}
        self.assertEqual("3 x 8 2 []", self.wrk_knobs(alone))


class MakeTest(unittest.TestCase):
    def test_make_passes_every_knob_with_the_file_default_and_a_command_line_value_wins(self):
        out = subprocess.run(
            ["make", "-n", "-s", "lab-local", "RATE=777", "PIDS=1"],
            cwd=tools.ROOT, capture_output=True, text=True, check=True,
        ).stdout
        line = next(line for line in out.splitlines() if "-m lab run" in line)
        self.assertIn("--rate='777'", line)
        for name, value in defaults.VALUES.items():
            if name.startswith("K8S_") or name in ("RATE", "PHASES"):
                continue
            self.assertIn(f"{knob_option(name)}='{value}'", line, name)
        self.assertIn(f"--phases {defaults.text('PHASES')}", line)

    def scale_line(self, *args: str, env: dict | None = None) -> str:
        out = subprocess.run(
            ["make", "-n", "-s", "lab-scale", "-o", "build", "-o", "lab-tools", *args],
            cwd=tools.ROOT, capture_output=True, text=True, check=True, env=env,
        ).stdout
        return next(line for line in out.splitlines() if "-m lab scale" in line)

    def test_lab_scale_takes_its_defaults_from_scale_env_not_from_the_other_targets(self):
        from lab import scale

        line = self.scale_line()
        for name, option in (("SIZES", "--sizes"), ("RATE", "--rate"), ("SCALE_DURATION", "--duration"),
                             ("SCALE_WARMUP", "--warmup"), ("VALUE_SIZE", "--value-size"),
                             ("MEMORY_LIMIT", "--memory-limit"), ("PORT", "--port"), ("NAME", "--name")):
            self.assertIn(f"{option} {scale.SCALE[name]} ", line, name)
        self.assertNotIn("--data", line)  # the Makefile's DATA (a node's data dir) is not the scale run's
        self.assertNotIn("--keep-data", line)

    def test_lab_scale_knobs_given_to_make_win(self):
        import os

        line = self.scale_line("RATE=777", "SIZES=20k,60k", "DATA=/tmp/d", "KEEP_DATA=1", "MEMORY_LIMIT=none")
        for part in ("--rate 777 ", "--sizes 20k,60k ", "--data /tmp/d", "--keep-data", "--memory-limit none "):
            self.assertIn(part, line)
        self.assertIn("--port 4321 ", self.scale_line(env=os.environ | {"PORT": "4321"}))

    def test_a_knob_whose_value_holds_spaces_stays_one_option(self):
        out = subprocess.run(
            ["make", "-n", "-s", "lab-hotpath", "-o", "build", "-o", "lab-tools",
             "HOTPATH_JAVA_OPTIONS=-Xmx256m -Dkvlab.storage.memory-reads.adaptive=false"],
            cwd=tools.ROOT, capture_output=True, text=True, check=True,
        ).stdout
        line = next(line for line in out.splitlines() if "-m lab hotpath" in line)
        self.assertIn("--java-options='-Xmx256m -Dkvlab.storage.memory-reads.adaptive=false' ", line)
        self.assertIn("--name='hotpath' ", line)

    def test_lab_hotpath_takes_its_defaults_from_hotpath_env_and_the_command_line_has_them(self):
        from lab import commands, hotpath

        out = subprocess.run(
            ["make", "-n", "-s", "lab-hotpath", "-o", "build", "-o", "lab-tools", "HOTPATH_PORT=4321"],
            cwd=tools.ROOT, capture_output=True, text=True, check=True,
        ).stdout
        line = next(line for line in out.splitlines() if "-m lab hotpath" in line)
        parsed = commands.parser("").parse_args(["hotpath"])
        for name, value in hotpath.HOTPATH.items():
            option = knob_option(name.removeprefix("HOTPATH_"))
            self.assertIn(f"{option}='{4321 if name == 'HOTPATH_PORT' else value}'", line, name)
            got = getattr(parsed, name.removeprefix("HOTPATH_").lower())
            if name in ("HOTPATH_DURATION", "HOTPATH_WARMUP"):
                value = defaults.duration(value)
            elif name == "HOTPATH_GET_RATES":
                value = tuple(int(x) for x in defaults.split(value))
            self.assertEqual(type(got)(value), got, name)
        self.assertEqual((defaults.integer("VALUE_SIZE"), defaults.integer("CONNECTIONS")),
                         (parsed.value_size, parsed.connections))

    def test_every_run_gates_on_its_verdict_the_ci_smoke_runs_on_data_and_a_report_only_when_asked(self):
        def lines(*args: str) -> list[str]:
            return subprocess.run(
                ["make", "-n", "-s", *args, "-o", "build", "-o", "lab-tools", "RUN=reports/x"],
                cwd=tools.ROOT, capture_output=True, text=True, check=True,
            ).stdout.replace("\\\n", " ").splitlines()

        gate = defaults.text("GATE")
        self.assertIn(f" --gate {gate} ", self.scale_line())
        self.assertIn(f"--gate {gate}", next(line for line in lines("lab-hotpath") if "-m lab hotpath" in line))
        self.assertIn("GATE=data", next(line for line in lines("lab-smoke") if "lab NAME=local-smoke" in line))
        self.assertIn("GATE=data", next(line for line in lines("lab-scale-smoke") if "NAME=scale-smoke" in line))
        self.assertNotIn("--gate", next(line for line in lines("lab-report") if "-m lab report" in line))
        self.assertIn("--gate all", next(line for line in lines("lab-report", "GATE=all") if "-m lab report" in line))

    def test_the_replication_cost_benchmark_takes_its_defaults_from_its_file_and_the_environment_wins(self):
        from lab import commands, replication_cost

        script = (tools.ROOT / "scripts" / "replication-cost.sh").read_text()
        for name in replication_cost.KNOBS:
            self.assertNotIn(f"{name}=${{{name}:-", script, f"the script writes {name}'s default again")
        probe = script.split('cd "$(dirname "$0")/.."', 1)[1].split("LAB_PY=", 1)[0]
        out = subprocess.run(
            ["bash", "-c", probe + 'echo "$SHARE $RUNS ${SCENARIOS//,/ } $START_RATE"'],
            cwd=tools.ROOT, capture_output=True, text=True, check=True,
            env={"PATH": os.environ["PATH"], "RUNS": "5"},
        ).stdout.split()
        k = replication_cost.KNOBS
        self.assertEqual([k["SHARE"], "5", *k["SCENARIOS"].split(","), k["START_RATE"]], out)
        parsed = commands.parser("").parse_args(["target-rate", "x"])
        self.assertEqual(float(k["SHARE"]), parsed.share)

    def test_the_scale_command_line_defaults_are_scale_env(self):
        from lab import scale, scalefigures

        cfg = scale.ScaleConfig()
        self.assertEqual(cfg.sizes, scalefigures.parse_sizes(scale.SCALE["SIZES"]))
        self.assertEqual(cfg.rate, int(scale.SCALE["RATE"]))
        self.assertEqual(cfg.duration_s, defaults.duration(scale.SCALE["SCALE_DURATION"]))
        self.assertEqual(cfg.memory_limit, scale.SCALE["MEMORY_LIMIT"])


if __name__ == "__main__":
    unittest.main()
