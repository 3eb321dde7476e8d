"""The lab's knobs come from one file: defaults.env feeds the run's settings, the command line's
options and make's variables."""

from __future__ import annotations

import subprocess
import tempfile
import unittest
from pathlib import Path

from lab import __main__ as cli
from lab import defaults, runner, tools


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
        cfg = runner.RunConfig(targets=[], pids=[])
        self.assertEqual(defaults.integer("RATE"), cfg.rate)
        self.assertEqual(defaults.seconds("WARMUP"), cfg.warmup_s)
        self.assertEqual(defaults.items("PHASES"), cfg.phases)
        self.assertEqual(defaults.items("EVENTS"), cfg.events)
        sat = runner.Saturation()
        self.assertEqual((defaults.text("SEARCH"), defaults.integer("SEARCH_STEPS")), (sat.scenario, sat.max_steps))


DURATIONS = ("DURATION", "WARMUP", "HEAL_TIMEOUT", "SEARCH_STEP", "REQUEST_TIMEOUT", "SOAK_DURATION", "SOAK_WINDOW",
             "SOAK_SAMPLE")


def expected(name: str, value: str):
    """A knob's value from the file as the command line parses it."""
    if name in DURATIONS:
        return defaults.duration(value)
    if name in ("PHASES", "EVENTS"):
        return defaults.split(value)
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

    def test_every_knob_is_an_option_of_run_and_saturate_with_the_file_default(self):
        run = self.parse("run", "--targets", "http://127.0.0.1:1")
        sat = self.parse("saturate", "--targets", "http://127.0.0.1:1")
        for name, value in defaults.VALUES.items():
            if name.startswith("K8S_"):
                continue
            dest = name.lower()
            for parsed, command in ((run, "run"), (sat, "saturate")):
                if name == "PHASES" and command == "saturate":
                    continue
                self.assertTrue(hasattr(parsed, dest), f"{command} has no {knob_option(name)} for {name}")
                self.assertEqual(expected(name, value), getattr(parsed, dest), f"{command} {knob_option(name)}")

    def test_the_short_search_after_the_phases_can_be_left_out(self):
        self.assertEqual("none", self.parse("run", "--targets", "http://127.0.0.1:1", "--search", "none").search)


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

    def test_the_scale_command_line_defaults_are_scale_env(self):
        from lab import scale, scalefigures

        cfg = scale.ScaleConfig()
        self.assertEqual(cfg.sizes, scalefigures.parse_sizes(scale.SCALE["SIZES"]))
        self.assertEqual(cfg.rate, int(scale.SCALE["RATE"]))
        self.assertEqual(cfg.duration_s, defaults.duration(scale.SCALE["SCALE_DURATION"]))
        self.assertEqual(cfg.memory_limit, scale.SCALE["MEMORY_LIMIT"])


if __name__ == "__main__":
    unittest.main()
