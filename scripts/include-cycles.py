#!/usr/bin/env python3
"""Directory-level include cycles under src/: prints each pair of folders a <-> b where a file of src/a includes
src/b/... and a file of src/b includes src/a/... (with the files that do it), then every larger group of folders
that include each other round a loop. Exit status 1 when there is any cycle.

Usage: scripts/include-cycles.py [SRC_DIR]   (default: src)
"""
import itertools
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/')


def folder_edges(root):
    """{folder: {included folder: [files that include it]}} for the folders of root (third_party left out)."""
    edges = {}
    for d, _, files in os.walk(root):
        folder = os.path.relpath(d, root).split(os.sep)[0]
        if folder in ('.', 'third_party'):
            continue
        for f in files:
            if not f.endswith(('.h', '.cc')):
                continue
            path = os.path.join(d, f)
            for line in open(path, errors='replace'):
                m = INCLUDE.match(line)
                if m and m.group(1) != folder and os.path.isdir(os.path.join(root, m.group(1))):
                    edges.setdefault(folder, {}).setdefault(m.group(1), set()).add(os.path.relpath(path, root))
    return edges


def strongly_connected(edges):
    """Tarjan's algorithm: the groups of more than one folder that reach each other."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in list(edges):
        if v not in index:
            visit(v)
    return groups


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else 'src'
    edges = folder_edges(root)
    pairs = [(a, b) for a, b in itertools.combinations(sorted(edges), 2)
             if b in edges.get(a, {}) and a in edges.get(b, {})]
    for a, b in pairs:
        print(f'{a} <-> {b}: {a}->{b} {sorted(edges[a][b])}; {b}->{a} {sorted(edges[b][a])}')
    groups = strongly_connected(edges)
    print(f'{len(pairs)} two-folder cycle(s); folders in a cycle together: {groups}')
    return 1 if groups else 0


if __name__ == '__main__':
    sys.exit(main())
