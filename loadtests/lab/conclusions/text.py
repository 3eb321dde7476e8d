"""A conclusion cut the way its claims are read: blocks (paragraphs and list items), sentences,
clauses (at semicolons outside parentheses) and segments (at commas outside parentheses). A list
item's lead, the text before its first colon ("- **put** at 500/s: ..."), names what the item is
about for sentences that do not."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
# A full stop and a space end a sentence, unless they end an abbreviation.
SENTENCE_END = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bcf\.)(?<!\betc\.)(?<!\bapprox\.)(?<=[.!?])\s+(?=\S)")


@dataclass
class Sentence:
    raw: str  # as written (links and code spans intact)
    text: str  # prose only (numbers.prose): code spans and link targets blanked
    lead: str  # the lead of the list item it belongs to, or ""
    clauses: list[str] = field(default_factory=list)


def blocks(markdown: str) -> list[tuple[str, bool]]:
    """(text, is a list item) of each paragraph and list item, lines joined."""
    out: list[tuple[list[str], bool]] = []
    for line in markdown.splitlines():
        if not line.strip():
            out.append(([], False))
            continue
        if ITEM.match(line):
            out.append(([ITEM.sub("", line)], True))
        elif out and out[-1][0]:
            out[-1][0].append(line.strip())
        else:
            out.append(([line.strip()], False))
    return [(" ".join(lines), item) for lines, item in out if lines]


def split_outside_parens(text: str, separators: str) -> list[str]:
    """text cut at each separator character that is not inside parentheses."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c in separators and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def sentences(markdown: str, prose) -> list[Sentence]:
    """Every sentence of the conclusion with its clauses; prose: numbers.prose, which blanks what is
    not prose."""
    out = []
    for block, item in blocks(markdown):
        lead = ""
        if item:
            head = prose(block).split(". ")[0]
            lead = head.split(": ")[0] if ": " in head else ""
        for raw in SENTENCE_END.split(block):
            text = prose(raw)
            out.append(Sentence(raw, text, lead, split_outside_parens(text, ";")))
    return out


def segment_of(clause: str, at: int) -> tuple[int, int]:
    """The start and end of the comma-separated part of the clause that holds position at."""
    start, depth = 0, 0
    for i, c in enumerate(clause):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0 and clause[i + 1 : i + 2] == " ":
            if i >= at:
                return start, i
            start = i + 1
    return start, len(clause)


def open_paren(clause: str, at: int) -> int | None:
    """Where the parenthesis that holds position at opens, if one does."""
    depth = 0
    for i in range(at - 1, -1, -1):
        if clause[i] == ")":
            depth += 1
        elif clause[i] == "(":
            if depth == 0:
                return i
            depth -= 1
    return None
