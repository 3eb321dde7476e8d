"""Checks that an async-profiler HTML flame graph is a real one of a kvlab node.

    python3 flamegraph-check.py FILE [MIN_FRAMES] [MIN_KVLAB_FRAMES]

async-profiler writes the frame names into the page as `const cpool = [...]`, each entry after the
first starting with a character that says how many leading characters it shares with the entry
before it (chr(32 + n)). This decodes them and counts the distinct frames, and those of kvlab's
own code (dev/kvlab/...). Prints what it found; exits 1 when there are too few.
"""
import re
import sys


def frames(html):
    match = re.search(r"const cpool = \[(.*?)\n\];", html, re.S)
    if not match:
        return []
    names, previous = [], ""
    for i, raw in enumerate(re.findall(r"'((?:[^'\\]|\\.)*)'", match.group(1))):
        entry = re.sub(r"\\(.)", r"\1", raw)
        previous = entry if i == 0 else previous[: ord(entry[0]) - 32] + entry[1:]
        names.append(previous)
    return names


def main():
    path = sys.argv[1]
    min_frames = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    min_kvlab = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    with open(path, encoding="utf-8", errors="replace") as f:
        names = frames(f.read())
    kvlab = sorted({n for n in names if n.startswith("dev/kvlab/")})
    print(f"{path}: {len(names)} frames, {len(kvlab)} of them kvlab's, e.g. {', '.join(kvlab[:3])}")
    if len(names) < min_frames or len(kvlab) < min_kvlab:
        print(f"too few: want at least {min_frames} frames and {min_kvlab} kvlab frames", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
