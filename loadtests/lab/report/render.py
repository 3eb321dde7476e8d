"""One report structure, two files: the Markdown template renders report.md, and report.html is
that Markdown rendered by the markdown package inside a page with its own CSS, the plots embedded
as data URIs (the page stays one self-contained file) and the flame graphs linked as the sibling
files they are."""

from __future__ import annotations

import base64
import mimetypes
import xml.etree.ElementTree as ET
from pathlib import Path

import jinja2
import markdown
from markupsafe import Markup
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

from . import fmt

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
# Tables, code blocks, and Markdown inside the verdict's div.
EXTENSIONS = ["tables", "fenced_code", "md_in_html", "sane_lists"]


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


def markdown_report(ctx: dict) -> str:
    return _jinja(False).get_template("report.md.j2").render(ctx)


class _Files(Treeprocessor):
    """Images the report shows become data URIs; links to another run's report.md point at its
    report.html, the page a reader of the HTML wants."""

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


class _FilesExtension(Extension):
    def __init__(self, base: Path):
        super().__init__()
        self.base = base

    def extendMarkdown(self, md) -> None:  # noqa: N802 - the markdown package's name
        md.treeprocessors.register(_Files(md, self.base), "kvlab_files", 0)


def html_page(md_text: str, title: str, base: Path) -> str:
    """The Markdown report as one HTML page; files it names are read relative to base."""
    body = markdown.markdown(md_text, extensions=[*EXTENSIONS, _FilesExtension(base)], output_format="html")
    # The markdown package escaped what needed it: the page takes its HTML as it is.
    return _jinja(True).get_template("page.html.j2").render(title=title, body=Markup(body))


def write(run_dir: Path, ctx: dict) -> tuple[Path, Path]:
    md_text = markdown_report(ctx)
    md_path, html_path = run_dir / "report.md", run_dir / "report.html"
    md_path.write_text(md_text)
    html_path.write_text(html_page(md_text, ctx["title"], run_dir))
    return md_path, html_path
