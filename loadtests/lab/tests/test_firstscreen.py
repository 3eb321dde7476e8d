"""The reports' first screens in a real browser (headless Chromium, Debian's package): the title of
the report's kind, its verdict box with every row on the first screen, and no paragraph that shows
a list as text; on synthetic reports and on every example in docs/reports. Run: make lab-selftest
(it installs chromium)."""

from __future__ import annotations

import json
import struct
import tempfile
import unittest
from pathlib import Path

from lab import firstscreen, report
from lab.tests.test_lab import write_run
from lab.tests.test_report import edit, three_nodes

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "reports"
NO_BROWSER = "no chromium here: loadtests/tools/install.sh chromium (make lab-selftest does)"


def png_size(path: Path) -> tuple[int, int]:
    return struct.unpack(">II", path.read_bytes()[16:24])


@unittest.skipUnless(firstscreen.chromium(), NO_BROWSER)
class FirstScreenTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        """One run of three nodes whose conclusion has a list right after a line of text, as people
        write them and GitHub renders them."""
        tmp = tempfile.TemporaryDirectory()
        cls.addClassCleanup(tmp.cleanup)
        cls.root = Path(tmp.name)
        cls.run_dir = write_run(cls.root, "20260101-000000-lab", 0.4)
        edit(cls.run_dir, three_nodes)
        (cls.run_dir / "conclusion.md").write_text("**What was run.** Three nodes:\n- put at 500/s;\n- get at 500/s.\n")
        report.generate(cls.run_dir)
        cls.shot = cls.root / "first.png"
        cls.screen = firstscreen.look(cls.run_dir / "report.html", cls.shot)

    def page_with(self, before_verdict: str = "", paragraph: str = "") -> Path:
        """A copy of the report's page with something put before its verdict box and a paragraph
        added at its end."""
        page = (self.run_dir / "report.html").read_text()
        page = page.replace('<div class="verdict">', before_verdict + '<div class="verdict">', 1)
        page = page.replace("</body>", paragraph + "</body>")
        out = self.root / f"page-{len(list(self.root.glob('page-*')))}.html"
        out.write_text(page)
        return out

    def test_the_title_and_every_verdict_row_lie_on_the_first_screen(self):
        self.assertEqual((firstscreen.WIDTH, firstscreen.HEIGHT), png_size(self.shot))
        title = (self.run_dir / "report.md").read_text().splitlines()[0].removeprefix("# ")
        self.assertEqual(title, self.screen.title["text"])
        self.assertLess(self.screen.title["bottom"], self.screen.verdict["top"])
        rows = [b["cells"][0] for b in self.screen.verdict["blocks"] if b["tag"] == "tr" and b["cells"]]
        verdict = json.loads((self.run_dir / "verdict.json").read_text())
        checks = [firstscreen.plain(r["check"]) for r in verdict["rows"]]
        self.assertEqual(checks, rows[: len(checks)])
        self.assertTrue(any(c.startswith("put") for c in checks) and any(c.startswith("get") for c in checks), checks)
        self.assertEqual([], firstscreen.problems(self.run_dir, self.screen))

    def test_a_list_after_a_line_of_text_is_a_list_in_the_browser(self):
        self.assertEqual([], self.screen.literal_list_markers)
        self.assertIn("<li>put at 500/s;</li>", (self.run_dir / "report.html").read_text())

    def test_it_sees_a_verdict_below_the_first_screen_and_a_list_left_as_text(self):
        page = self.page_with('<div style="height: 900px"></div>', "<p>What was run:\n- put;\n- get.</p>")
        found = firstscreen.problems(self.run_dir, firstscreen.look(page))
        self.assertTrue(any(p.startswith("the verdict box begins") for p in found), found)
        self.assertIn("the verdict row 'put' is not on the first screen", "\n".join(found))
        self.assertIn("a paragraph shows list markers as text: 'What was run: - put; - get.'", found)

    def test_it_holds_the_page_to_its_verdict_json(self):
        path = self.run_dir / "verdict.json"
        written = path.read_text()
        self.addCleanup(path.write_text, written)
        self.assertEqual([], firstscreen.problems(self.run_dir, self.screen))
        verdict = json.loads(written)
        verdict |= {"title": "kvlab faults: n2 killed, paused and cut off", "answer": "Nothing was lost."}
        verdict["rows"].append({"check": "acknowledged writes lost", "observed": "0 of 9", "target": "0",
                                "status": "pass", "gate": "data"})
        path.write_text(json.dumps(verdict))
        self.assertEqual(
            [
                f"the page's title is {self.screen.title['text']!r}, not 'kvlab faults: n2 killed, paused and cut off'",
                "the verdict box does not give the answer 'Nothing was lost.'",
                "the verdict box has no row 'acknowledged writes lost'",
            ],
            firstscreen.problems(self.run_dir, self.screen),
        )


@unittest.skipUnless(firstscreen.chromium(), NO_BROWSER)
class ExampleReportsTest(unittest.TestCase):
    def test_every_example_answers_its_question_on_its_first_screen(self):
        runs = sorted(p.parent for p in EXAMPLES.glob("*/report.html"))
        if not runs:
            self.skipTest("no example report in docs/reports")
        with tempfile.TemporaryDirectory() as tmp:
            for run in runs:
                with self.subTest(run.name):
                    shot = Path(tmp) / f"{run.name}.png"
                    self.assertEqual([], firstscreen.problems(run, firstscreen.look(run / "report.html", shot)))
                    self.assertEqual((firstscreen.WIDTH, firstscreen.HEIGHT), png_size(shot))


if __name__ == "__main__":
    unittest.main()
