"""What a reader sees first when they open a report.html: the page laid out by headless Chromium in
a 1280×800 window, a screenshot of that first screen, and facts read from the laid-out page (its
title, the verdict box and the rows and paragraphs in it, each with where it lies), with every
paragraph that shows a list's markers as text (" - " that the Markdown did not make a list). The
lab's self-tests hold every report's first screen to what the report's verdict says it answers.

    python -m lab.firstscreen [--screenshots DIR] RUN_DIR...

prints, per report, what its first screen lacks, and writes the screenshots to DIR. Needs Debian's
chromium (loadtests/tools/install.sh chromium).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

WIDTH, HEIGHT = 1280, 800
TIMEOUT_S = 120

# Runs in the laid-out page once everything (the embedded plots too) has loaded, and writes what
# it measured into the page, which Chromium's --dump-dom then prints.
PROBE = """<script>
addEventListener("load", () => {
  const where = (el) => { const r = el.getBoundingClientRect(); return {top: r.top + scrollY, bottom: r.bottom + scrollY}; };
  const text = (el) => el.textContent.replace(/\\s+/g, " ").trim();
  const h1 = document.querySelector("h1");
  const box = document.querySelector(".verdict");
  const blocks = box ? [...box.querySelectorAll("p, li, tr, h2, h3, h4")].map((el) => ({
    tag: el.tagName.toLowerCase(), text: text(el), cells: [...el.querySelectorAll("td")].map(text), ...where(el)})) : [];
  const marker = /(^|\\n)[ \\t]*([-*+]|1[.)])[ \\t]+\\S/;
  const literal = [...document.querySelectorAll("p")].filter((p) => marker.test(p.textContent))
    .map((p) => text(p).slice(0, 160));
  const out = document.createElement("pre");
  out.id = "kvlab-layout";
  out.textContent = JSON.stringify({
    width: innerWidth,
    title: h1 && {text: text(h1), ...where(h1)},
    verdict: box && {...where(box), blocks},
    literal_list_markers: literal,
  });
  document.body.appendChild(out);
});
</script>"""
LAYOUT = re.compile(r'<pre id="kvlab-layout">(.*?)</pre>', re.S)


@dataclass
class Screen:
    """The laid-out page: where things are, in CSS pixels from the top of the page."""

    width: int  # of the page's layout: the window's
    height: int  # of the first screen: the screenshot's (the window's, less no browser bar)
    title: dict | None  # {text, top, bottom}
    verdict: dict | None  # {top, bottom, blocks: [{tag, text, cells, top, bottom}]}
    literal_list_markers: list[str]  # paragraphs (their start) that show list markers as text

    def shows(self, block: dict) -> bool:
        """Whether the block lies wholly on the first screen."""
        return block["bottom"] <= self.height


def chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def _chromium(args: list[str], profile: Path) -> str:
    browser = chromium()
    if not browser:
        raise RuntimeError("no chromium on PATH: loadtests/tools/install.sh chromium")
    command = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
        f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}", *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited with {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def look(page: Path, screenshot: Path | None = None) -> Screen:
    """Opens the page in headless Chromium: its layout facts, and its first screen as a PNG when
    screenshot names a file."""
    page = Path(page).resolve()
    with tempfile.TemporaryDirectory(prefix="kvlab-firstscreen-") as tmp:
        tmp = Path(tmp)
        probed = tmp / "page.html"
        source = page.read_text()
        at = source.rfind("</body>")
        probed.write_text(source[:at] + PROBE + source[at:] if at >= 0 else source + PROBE)
        dom = _chromium(["--virtual-time-budget=10000", "--dump-dom", probed.as_uri()], tmp / "profile")
        if screenshot:
            _chromium([f"--screenshot={Path(screenshot).resolve()}", page.as_uri()], tmp / "profile")
    found = LAYOUT.search(dom)
    if not found:
        raise RuntimeError(f"{page}: the page did not report its layout (did it load?)")
    facts = json.loads(html.unescape(found.group(1)))
    return Screen(
        width=facts["width"],
        height=HEIGHT,
        title=facts["title"],
        verdict=facts["verdict"],
        literal_list_markers=facts["literal_list_markers"],
    )


def plain(text: str) -> str:
    """Markdown's text as a browser shows it: without emphasis, code marks and escapes, spaces
    collapsed."""
    text = re.sub(r"\*\*|`|\\(?=[|*_<`])", "", text).replace("&lt;", "<")
    return re.sub(r"\s+", " ", text).strip()


SEPARATOR = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")


def table_rows(md: str) -> list[str]:
    """The first cell of every row below the header of the Markdown tables in md."""
    rows, in_table = [], False
    for line in md.splitlines():
        if SEPARATOR.match(line):
            in_table = True
        elif in_table and line.startswith("|"):
            rows.append(plain(re.split(r"(?<!\\)\|", line)[1]))
        else:
            in_table = False
    return rows


def expected(run_dir: Path) -> dict:
    """What the report's first screen must show: the title, the answer and the rows of its
    verdict (verdict.json), else the title and the verdict box's rows of its report.md."""
    verdict_path = run_dir / "verdict.json"
    if verdict_path.exists():
        v = json.loads(verdict_path.read_text())
        return {
            "title": plain(v["title"]),
            "answer": plain(v.get("answer") or ""),
            "rows": [plain(r["check"]) for r in v.get("rows", [])],
        }
    md = (run_dir / "report.md").read_text()
    box = re.search(r'<div class="verdict" markdown="1">\n(.*?)\n</div>', md, re.S)
    return {
        "title": plain(md.splitlines()[0].removeprefix("# ")) if md.startswith("# ") else "",
        "answer": "",
        "rows": table_rows(box.group(1)) if box else [],
    }


def problems(run_dir: Path, screen: Screen) -> list[str]:
    """What the report's first screen fails to show, in words; empty when it answers its question."""
    want = expected(Path(run_dir))
    found = []
    title = screen.title
    if not title or title["text"] != want["title"]:
        found.append(f"the page's title is {title and title['text']!r}, not {want['title']!r}")
    elif not screen.shows(title):
        found.append("the title is not on the first screen")
    box = screen.verdict
    if not box:
        return found + ["the page has no verdict box"]
    if box["top"] >= screen.height:
        found.append(f"the verdict box begins {box['top']:.0f} px down, below the first screen ({screen.height} px)")
    if want["answer"]:
        said = [b for b in box["blocks"] if want["answer"] in b["text"]]
        if not said:
            found.append(f"the verdict box does not give the answer {want['answer']!r}")
        elif not screen.shows(said[0]):
            found.append("the verdict's answer is not on the first screen")
    rows = [b for b in box["blocks"] if b["tag"] == "tr" and b["cells"]]
    for check in want["rows"]:
        row = next((r for r in rows if r["cells"][0] == check or check in r["text"]), None)
        if not row:
            found.append(f"the verdict box has no row {check!r}")
        elif not screen.shows(row):
            found.append(f"the verdict row {check!r} is not on the first screen ({row['bottom']:.0f} px > {screen.height})")
    found.extend(f"a paragraph shows list markers as text: {p!r}" for p in screen.literal_list_markers)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.firstscreen", description=__doc__.split("\n\n")[0])
    parser.add_argument("--screenshots", type=Path, help="where to write <run>.png (default: a new temporary folder)")
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    shots = args.screenshots or Path(tempfile.mkdtemp(prefix="kvlab-first-screens-"))
    shots.mkdir(parents=True, exist_ok=True)
    failed = 0
    for run in args.runs:
        png = shots / f"{run.resolve().name}.png"
        found = problems(run, look(run / "report.html", png))
        failed += bool(found)
        for p in found:
            print(f"{run}: {p}")
        print(f"{run}: {'first screen whole' if not found else f'{len(found)} problem(s)'}; screenshot {png}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
