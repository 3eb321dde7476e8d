"""One report structure, two files: the Markdown template renders report.md, and report.html is
that Markdown rendered by the markdown package inside a page with its own CSS, the plots embedded
as data URIs (the page stays one self-contained file) and the flame graphs linked as the sibling
files they are. Both open with a table of contents made from the report's own headings; its links
are the anchors GitHub gives those headings, and the page gives them the same ids. The page reads
the Markdown as GitHub does where the markdown package would not: a list may follow a line of text
without a blank line between them."""

from __future__ import annotations

import base64
import mimetypes
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jinja2
import markdown
from markupsafe import Markup
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

from . import fmt

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
# Tables, code blocks, and Markdown inside the verdict's div and the folded <details>.
EXTENSIONS = ["tables", "fenced_code", "md_in_html", "sane_lists"]
HEADING = re.compile(r"^(#{1,6}) +(.+?) *#*$")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
# A list item that may interrupt a paragraph, as GitHub (CommonMark) reads it: a bullet, or an
# ordered list that starts at 1.
LIST_START = re.compile(r"^ {0,3}(?:[-*+]|1[.)]) +\S")


def _jinja(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters |= fmt.FILTERS
    return env


def slug(text: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


class Anchors:
    """Anchors for the headings of one document in order; a repeated one gets -1, -2... as on GitHub."""

    def __init__(self):
        self.seen: dict[str, int] = {}

    def __call__(self, text: str) -> str:
        base = slug(text)
        n = self.seen.get(base, 0)
        self.seen[base] = n + 1
        return base if n == 0 else f"{base}-{n}"


def headings(md_text: str) -> list[tuple[int, str, str]]:
    """The Markdown's headings outside code blocks: (level, text as shown, anchor)."""
    out, fenced, anchor = [], False, Anchors()
    for line in md_text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m:
            text = re.sub(r"[`*]|\\(?=\S)", "", m.group(2))
            out.append((len(m.group(1)), text, anchor(text)))
    return out


def contents(md_text: str) -> str:
    """The table of contents as Markdown: a line per section, the sections under it beside it."""
    sections: list[tuple[str, list[str]]] = []
    for level, text, anchor in headings(md_text):
        if level == 2:
            sections.append((f"[{text}](#{anchor})", []))
        elif level == 3 and sections:
            sections[-1][1].append(f"[{text}](#{anchor})")
    if not sections:
        return ""
    lines = [f"- {link}" + (": " + " · ".join(under) if under else "") for link, under in sections]
    return '\n<div class="contents" markdown="1">\n\n**Contents**\n\n' + "\n".join(lines) + "\n\n</div>"


def markdown_report(ctx: dict) -> str:
    """report.md: the template rendered once to find its headings, then with its table of contents."""
    template = _jinja(False).get_template("report.md.j2")
    draft = template.render(ctx | {"contents": ""})
    return template.render(ctx | {"contents": contents(draft)})


def lists_as_github_reads_them(lines: list[str]) -> list[str]:
    """A blank line before a list that follows a line of text: the markdown package would read the
    items as more of the paragraph, " - " and all."""
    out, fenced, in_list = [], False, False
    for line in lines:
        if FENCE.match(line):
            fenced = not fenced
        if not fenced:
            if not line.strip():
                in_list = False
            elif LIST_START.match(line):
                if out and out[-1].strip() and not in_list:
                    out.append("")
                in_list = True
        out.append(line)
    return out


class _Lists(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return lists_as_github_reads_them(lines)


THOUSANDS_SPACE = re.compile(r"(?<=\d) (?=\d{3}(?!\d))")


def _unbroken_numbers(text: str | None) -> str | None:
    """"1 000/s" with a no-break space, so that a table cell or a title never breaks a number."""
    return THOUSANDS_SPACE.sub("\u00a0", text) if text else text


class _Page(Treeprocessor):
    """Images the report shows become data URIs; links to another run's report.md point at its
    report.html, the page a reader of the HTML wants; headings get the ids GitHub gives them, which
    the table of contents links."""

    def __init__(self, md, base: Path):
        super().__init__(md)
        self.base = base

    def run(self, root: ET.Element) -> None:
        for img in root.iter("img"):
            src = img.get("src", "")
            path = self.base / src
            if src and "://" not in src and not src.startswith("data:") and path.is_file():
                kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                img.set("src", f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode()}")
        for a in root.iter("a"):
            href = a.get("href", "")
            if "://" not in href and href.endswith("report.md"):
                a.set("href", href[: -len("report.md")] + "report.html")
        for el in root.iter():
            if el.tag not in ("code", "pre"):
                el.text = _unbroken_numbers(el.text)
            el.tail = _unbroken_numbers(el.tail)
        anchor = Anchors()
        for h in root.iter():
            if isinstance(h.tag, str) and re.fullmatch(r"h[1-6]", h.tag):
                h.set("id", anchor("".join(h.itertext())))


class _PageExtension(Extension):
    def __init__(self, base: Path):
        super().__init__()
        self.base = base

    def extendMarkdown(self, md) -> None:  # noqa: N802 - the markdown package's name
        # After the line endings are normalised (30), before code blocks and HTML are set apart (25, 20).
        md.preprocessors.register(_Lists(md), "kvlab_lists", 27)
        md.treeprocessors.register(_Page(md, self.base), "kvlab_page", 0)


def html_page(md_text: str, title: str, base: Path) -> str:
    """The Markdown report as one HTML page; files it names are read relative to base."""
    body = markdown.markdown(md_text, extensions=[*EXTENSIONS, _PageExtension(base)], output_format="html")
    # The markdown package escaped what needed it: the page takes its HTML as it is.
    return _jinja(True).get_template("page.html.j2").render(title=title, body=Markup(body))


def write(run_dir: Path, ctx: dict) -> tuple[Path, Path]:
    md_text = markdown_report(ctx)
    md_path, html_path = run_dir / "report.md", run_dir / "report.html"
    md_path.write_text(md_text)
    html_path.write_text(html_page(md_text, ctx["title"], run_dir))
    return md_path, html_path
