#!/usr/bin/env python3
"""Check that every relative link and #anchor in the manual resolves.

Reads README.md, docs/src/**/*.md and bench/*.md (paths relative to the repository root, the
parent of this file's folder). A link `[text](target)` or a reference definition
`[label]: target` whose target has no URL scheme must name a file or folder that exists,
relative to the file it is in; a `#anchor` must be a heading of the Markdown file it points
at (or of the same file), spelled as mdBook and GitHub spell heading ids: the heading's text
in lower case, spaces turned into `-`, punctuation other than `-` and `_` dropped, and a
second heading of the same text suffixed `-1`, `-2`, ... Links inside code (fenced blocks and
`inline code`) are not links and are skipped.

Exits 0 when every link resolves; otherwise prints `file:line: reason` for each broken link
and exits 1. Python 3 standard library only.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CUSTOM_ID = re.compile(r"\s*\{#([A-Za-z0-9_-]+)\}\s*$")
HTML_ID = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def sources():
    """The files to check, relative to ROOT, sorted."""
    out = []
    if os.path.exists(os.path.join(ROOT, "README.md")):
        out.append("README.md")
    for base, sub in (("docs/src", True), ("bench", False)):
        top = os.path.join(ROOT, base)
        if not os.path.isdir(top):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(".md"):
                    out.append(os.path.relpath(os.path.join(dirpath, f), ROOT))
            if not sub:
                break
    return out


def lines_outside_code(text):
    """(line number, line) of every line not inside a fenced code block."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)[0] * len(m.group(1))
                continue
            yield n, line
        elif m and m.group(1).startswith(fence):
            fence = None


def strip_inline_code(line):
    """The line with every `code span` blanked out (links inside code are not links)."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def plain(heading):
    """A heading's text as rendered: no code marks, emphasis, HTML tags or link targets (the
    text inside `code` is kept as it is, `<dataset>` included)."""
    out = []
    for i, part in enumerate(re.split(r"(`+[^`]*`+)", heading)):
        if i % 2:
            out.append(part.strip("`"))
            continue
        part = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", part)
        part = re.sub(r"<[^>]+>", "", part)
        out.append(part.replace("*", ""))
    return "".join(out)


def slug(text):
    out = []
    for ch in plain(text):
        if ch.isalnum() or ch in "-_":
            out.append(ch.lower())
        elif ch.isspace():
            out.append("-")
    return "".join(out)


_anchors = {}


def anchors(path):
    """Every anchor a Markdown file defines."""
    if path in _anchors:
        return _anchors[path]
    found = set()
    seen = {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for _, line in lines_outside_code(text):
        for m in HTML_ID.finditer(line):
            found.add(m.group(1))
        m = HEADING.match(line)
        if not m:
            continue
        title = m.group(2)
        custom = CUSTOM_ID.search(title)
        if custom:
            found.add(custom.group(1))
            continue
        s = slug(title)
        n = seen.get(s, 0)
        seen[s] = n + 1
        found.add(s if n == 0 else f"{s}-{n}")
    _anchors[path] = found
    return found


def check(rel):
    problems = []
    path = os.path.join(ROOT, rel)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for n, line in lines_outside_code(text):
        code_free = strip_inline_code(line)
        targets = [m.group(1) for m in INLINE_LINK.finditer(code_free)]
        m = REF_DEF.match(code_free)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if not target or SCHEME.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            if file_part:
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if not os.path.exists(dest):
                    problems.append(f"{rel}:{n}: `{target}`: {file_part} does not exist")
                    continue
                if not dest.startswith(ROOT + os.sep) and dest != ROOT:
                    problems.append(f"{rel}:{n}: `{target}` leads outside the repository")
                    continue
            else:
                dest = path
            if anchor:
                if not dest.endswith(".md") or os.path.isdir(dest):
                    problems.append(f"{rel}:{n}: `{target}`: #{anchor} points into a file that is not Markdown")
                elif anchor not in anchors(dest):
                    where = os.path.relpath(dest, ROOT)
                    problems.append(f"{rel}:{n}: `{target}`: {where} has no heading #{anchor}")
    return problems


def main():
    files = sources()
    problems = [p for rel in files for p in check(rel)]
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} broken link(s) in {len(files)} file(s)", file=sys.stderr)
        return 1
    print(f"every relative link resolves in {len(files)} file(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
