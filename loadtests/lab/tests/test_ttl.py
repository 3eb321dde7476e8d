"""The ttl phase: expiring writes and the GETs of them, run like the other phases."""

import json
import subprocess
import unittest
from pathlib import Path

from lab import defaults, load, settings, tools
from lab.scenarios import phases as phase_scenario


class TtlPhaseTest(unittest.TestCase):
    def test_ttl_is_a_phase_on_k6_and_on_wrk(self):
        self.assertEqual(("ttl", None), phase_scenario.phase_spec("ttl"))
        self.assertEqual(("ttl", "wrk"), phase_scenario.phase_spec("ttl@wrk"))

    def test_every_phase_but_the_outage_has_a_k6_and_a_wrk_script(self):
        for phase in phase_scenario.PHASES:
            if phase == "outage":
                continue
            self.assertTrue((tools.LOADTESTS / "k6" / f"{phase}.js").exists(), phase)
            if phase != "mixed":
                self.assertTrue((tools.LOADTESTS / "wrk2" / f"{phase}.lua").exists(), phase)

    def test_the_scripts_get_the_time_to_live_and_the_share_of_gets(self):
        cfg = settings.RunConfig(targets=["http://a"], pids=[], ttl_s=7, read_share=0.25)
        env = load.k6_env(cfg.spec("ttl"))
        self.assertEqual(("7", "0.25"), (env["TTL"], env["READ_SHARE"]))
        self.assertEqual(str(defaults.integer("TTL")), load.k6_env(settings.RunConfig(targets=["http://a"], pids=[]).spec("ttl"))["TTL"])
        self.assertNotIn("TTL", load.k6_env(cfg.spec("get")), "only the ttl phase")
        _, wrk_env = load.wrk_args(cfg.spec("ttl", tool="wrk"), True)
        self.assertEqual("7", wrk_env["TTL"])

    def test_k6_ttl_script_holds_its_rate_and_refuses_a_bad_ttl(self):
        k6 = tools.k6()
        if not Path(k6).exists():
            self.skipTest("no k6 (make lab-tools)")

        def inspect(env: dict) -> subprocess.CompletedProcess:
            return subprocess.run([k6, "inspect", "--include-system-env-vars", str(tools.LOADTESTS / "k6" / "ttl.js")],
                                  capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"} | env, cwd="/")

        ok = inspect({"RATE": "33", "TTL": "5"})
        self.assertEqual(0, ok.returncode, ok.stderr)
        self.assertEqual(33, json.loads(ok.stdout)["scenarios"]["main"]["rate"])
        bad = inspect({"TTL": "0"})
        self.assertNotEqual(0, bad.returncode)
        self.assertIn("TTL must be", bad.stdout + bad.stderr)


if __name__ == "__main__":
    unittest.main()
