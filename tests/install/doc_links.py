#!/usr/bin/env python3
"""Relative links of the README and docs/*.md resolve: the file exists, and an anchor
(#heading) names a heading of that Markdown file, spelt as GitHub spells it.

    doc_links.py SOURCE_DIR
Prints "PASS: ..." or one "FAIL: FILE:LINE: LINK: why" per broken link (exit 1)."""
import re
import sys
from pathlib import Path

LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    in_code = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if not in_code:
            yield number, line


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)  # GitHub keeps letters, digits, _, - and spaces
    return s.replace(" ", "-")


def anchors(path):
    seen = {}
    out = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def main():
    root = Path(sys.argv[1]).resolve()
    files = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    failures = []
    checked = 0
    for md in files:
        for number, line in prose_lines(md.read_text(encoding="utf-8")):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                    continue
                checked += 1
                where = f"{md.relative_to(root)}:{number}: {target}"
                path_part, _, anchor = target.partition("#")
                dest = (md.parent / path_part).resolve() if path_part else md
                if not dest.exists():
                    failures.append(f"{where}: {path_part} does not exist")
                    continue
                if root not in dest.parents and dest != root:
                    failures.append(f"{where}: points outside the source tree")
                    continue
                if anchor:
                    if dest.suffix != ".md":
                        failures.append(f"{where}: an anchor into a file that is not Markdown")
                    elif anchor not in anchors(dest):
                        failures.append(f"{where}: no heading '#{anchor}' in {dest.relative_to(root)}")
    for f in failures:
        print(f"FAIL: {f}")
    if failures:
        return 1
    print(f"PASS: {checked} relative links in {len(files)} files resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
