"""The lab's knobs and their defaults, read from defaults.env next to this file: the one place
make, the command line and the run's settings (which the Kubernetes Jobs get) take them from."""

from __future__ import annotations

from pathlib import Path

FILE = Path(__file__).resolve().with_name("defaults.env")


def read(path: Path = FILE) -> dict[str, str]:
    values = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.isupper() or " " in value:
            raise ValueError(f"{path}:{number}: not NAME=value without spaces: {line!r}")
        values[name] = value
    return values


VALUES = read()


def text(name: str) -> str:
    return VALUES[name]


def integer(name: str) -> int:
    return int(VALUES[name])


def number(name: str) -> float:
    return float(VALUES[name])


def items(name: str) -> list[str]:
    return split(VALUES[name])


def seconds(name: str) -> int:
    return duration(VALUES[name])


def split(text: str) -> list[str]:
    """A comma-separated list, blanks left out."""
    return [x.strip() for x in text.split(",") if x.strip()]


def duration(text: str) -> int:
    """Seconds from 30, 30s, 2m, 1m30s; ValueError with the forms it takes otherwise."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    total, digits = 0, ""
    for ch in text:
        if ch.isdigit():
            digits += ch
        elif ch in "smh" and digits:
            total += int(digits) * {"s": 1, "m": 60, "h": 3600}[ch]
            digits = ""
        else:
            raise ValueError(f"bad duration {text!r}: use 30, 30s, 2m or 1m30s")
    if digits or not text:
        raise ValueError(f"bad duration {text!r}: a number needs its unit")
    return total
