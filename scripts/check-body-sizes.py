#!/usr/bin/env python3
"""Lists every function or class body in the C++ sources longer than a limit (docs/development.md: a body a
reader can hold in mind; issue 53 set 300 lines). A brace matcher rather than a parser: comments, strings and
character literals are blanked first, then each brace opened at namespace scope is measured to its match, except
a namespace's or an extern "C" block's own (what they hold is measured) and data written as `= {` or `({`
(tables and registrations). Exit 1 when a body is over the limit, naming each with its file, line and length.

Usage: scripts/check-body-sizes.py [--max LINES] [--known FILE:HEAD]... DIR_OR_FILE...
--known names a body that is over the limit and waiting to be cut (its file and the start of its head, e.g.
"src/agent/agent.cc:struct Agent::Impl"): it is listed, not failed, and the run fails when it is no longer over
(so the exception goes with it).
"""
import argparse
import os
import re
import sys

SOURCE = re.compile(r"\.(cc|h|cpp|hpp)$")
# Comments, raw strings, strings and characters, each replaced by spaces of its own length (newlines kept).
TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank(text):
    return TOKENS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def bodies(text):
    """(first line, lines, head) of each measured body of `text` (already blanked)."""
    out = []
    stack = []  # per open brace: (measured, line, head) ; namespace braces are transparent
    head_start = 0
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            head = text[head_start:i]
            scope_is_namespace = all(not m for m, _, _ in stack)
            head_words = " ".join(head.split())
            is_namespace = re.search(r'(^|\s)(inline\s+)?namespace(\s+[\w:]+)?\s*$|extern\s+"C"\s*$', head_words) or \
                re.search(r'extern\s*$', head_words)
            is_data = re.search(r"[=(,]\s*$", head_words)
            measured = scope_is_namespace and not is_namespace and not is_data
            stack.append((measured, line, head_words[-80:]))
            head_start = i + 1
        elif c == "}":
            if stack:
                measured, first, head = stack.pop()
                if measured:
                    out.append((first, line - first + 1, head))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=300)
    ap.add_argument("--known", action="append", default=[])
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    files = []
    for p in a.paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in names if SOURCE.search(n)]
        else:
            files.append(p)
    over = []
    known_seen = set()
    for f in sorted(files):
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = blank(fh.read())
        # Preprocessor lines hold no bodies, and a `#define` with braces would unbalance the count.
        text = re.sub(r"(?m)^[ \t]*#.*(?:\\\n.*)*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
        for first, lines, head in bodies(text):
            if lines > a.max:
                key = next((k for k in a.known if k.split(":", 1)[0] == f and head.strip().startswith(k.split(":", 1)[1])),
                           None)
                line = f"{f}:{first}: a body of {lines} lines (at most {a.max}): {head.strip()[-60:]}"
                if key:
                    known_seen.add(key)
                    print(line + " (known, to be cut)")
                else:
                    over.append(line)
    for k in a.known:
        if k not in known_seen:
            over.append(f"{k}: listed with --known but not over {a.max} lines: drop it from the list")
    for o in over:
        print(o)
    print(f"{len(files)} files, {len(over)} bodies over {a.max} lines", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
