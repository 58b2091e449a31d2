#!/usr/bin/env python3
"""The shape of andon's source, as issue-level figures: the largest file, the longest function
(counted by braces, tests included), the lines with a `Result<_, String>` (the plain and the
nested form), and the comparisons of a string with a token of the schema's closed vocabularies.
Usage: benches/shape.py [REPO]   (default: this repository; run it on a checkout of another
revision to compare)."""
import os
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
TOKENS = ("exact|heuristic|unresolved|declared|brief|contract|proven|refuted|unknown|unproven|"
          "broken/unproven|bug|feature|wire|local\\+reversible|hard-to-reverse|shared-state-visible|"
          "structural|executed|property|numeric|rubric|agentic|adversarial|proof-strength|static|"
          "dynamic|type_only|type_checking|re_export|wildcard|qualified|reference")
TOK = f'"({TOKENS})"'
COMPARE = re.compile(rf'(==|!=)\s*{TOK}|{TOK}\s*(==|!=)|matches!\([^)]*{TOK}|^\s*{TOK}\s*(\|[^=]*)?=>')
FN = re.compile(r'\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+\w+')


def longest_fn(lines):
    best = (0, 0)
    for i, line in enumerate(lines):
        if not FN.match(line):
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            depth += lines[j].count('{') - lines[j].count('}')
            started = started or '{' in lines[j]
            if started and depth <= 0:
                best = max(best, (j - i + 1, i + 1))
                break
            if not started and lines[j].rstrip().endswith(';'):
                break
    return best


def main():
    files = sorted(p for p in (ROOT / 'src').rglob('*.rs'))
    sizes, fns, plain, nested, compares = [], [], 0, 0, 0
    for p in files:
        text = p.read_text(encoding='utf-8')
        lines = text.split('\n')
        rel = p.relative_to(ROOT)
        sizes.append((len(lines) - 1, str(rel)))
        n, at = longest_fn(lines)
        fns.append((n, f'{rel}:{at}'))
        plain += sum(1 for l in lines if re.search(r'Result<[^>]*, String>', l))
        nested += sum(1 for l in lines if re.search(r'Result<.*,\s*String>', l))
        if p.name != 'tests.rs':
            compares += sum(1 for l in lines if COMPARE.search(l))
    print(f'files: {len(files)}')
    print('largest file: {1} ({0} lines)'.format(*max(sizes)))
    print('longest function: {1} ({0} lines)'.format(*max(fns)))
    print(f'lines with Result<_, String>: {plain} (with nested generics: {nested})')
    print(f'comparisons with a vocabulary token: {compares}')


if __name__ == '__main__':
    main()
