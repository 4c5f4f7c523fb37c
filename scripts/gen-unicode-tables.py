#!/usr/bin/python3
"""Writes the tokenizer's Unicode tables (src/core/tokenizer/unicode_tables.cpp) and the NFC cases of its native
test (tests/native/unicode_cases.h) from the Unicode Character Database as this machine's Python and Perl ship it.

Sources (both Unicode 14.0.0 on Debian 12, checked below so that the two agree):
  - Python's unicodedata: general categories (L*, N*), canonical combining classes, canonical decompositions,
    and NFC itself for the test cases and for deciding which decompositions recompose (a character whose own NFC
    is itself is a primary composite; the others are composition exclusions, singletons or non-starters);
  - Perl's Unicode::UCD (generated from the same UCD files): White_Space, the word characters of UTS #18
    (Alphabetic, marks, Nd, Pc, Join_Control: what `\\w` means in Unicode regexes) and simple case folding
    (CaseFolding.txt, statuses C and S), none of which Python's unicodedata exposes.

    /usr/bin/python3 scripts/gen-unicode-tables.py           # rewrite both files
    /usr/bin/python3 scripts/gen-unicode-tables.py --check   # exit 1 if a committed file differs (the build runs this)

The output is deterministic: the same UCD version gives the same bytes.
"""
import random
import subprocess
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLES = ROOT / 'src/core/tokenizer/unicode_tables.cpp'
CASES = ROOT / 'tests/native/unicode_cases.h'
UNICODE_VERSION = '14.0.0'
MAX = 0x110000


def perl(code):
    out = subprocess.run(['perl', '-Mfeature=fc', '-MUnicode::UCD=casefold,prop_invlist', '-e', code],
                         check=True, capture_output=True, text=True).stdout
    return out


def perl_version():
    return perl('print Unicode::UCD::UnicodeVersion()').strip()


def perl_set(prop):
    """The code points of a binary property, from its inversion list."""
    inv = [int(x) for x in perl(f'print join(" ", prop_invlist("{prop}"))').split()]
    s = set()
    for i in range(0, len(inv), 2):
        s.update(range(inv[i], inv[i + 1] if i + 1 < len(inv) else MAX))
    return s


def simple_folds():
    code = ('for my $cp (0..0x10FFFF) { next if $cp >= 0xD800 && $cp <= 0xDFFF; my $c = chr($cp); '
            'next if fc($c) eq $c; my $f = casefold($cp); next unless $f; my $s = $f->{simple}; '
            'next if !defined $s || $s eq ""; print "$cp ", hex($s), "\\n"; }')
    return {int(a): int(b) for a, b in (line.split() for line in perl(code).splitlines())}


def ranges(cps):
    """Sorted code points as [start, end] runs (end inclusive)."""
    out = []
    for cp in sorted(cps):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def fold_runs(folds):
    """Simple case folding as runs (start, count, stride, delta): start + i*stride folds to itself + delta.
    Latin, Greek and Cyrillic case pairs alternate (stride 2) or sit in blocks (stride 1)."""
    runs = []
    for cp in sorted(folds):
        delta = folds[cp] - cp
        if runs:
            start, count, stride, d = runs[-1]
            last = start + (count - 1) * stride
            if d == delta and ((count == 1 and cp - last in (1, 2)) or (count > 1 and cp - last == stride)):
                runs[-1] = [start, count + 1, cp - last if count == 1 else stride, d]
                continue
        runs.append([cp, 1, 1, delta])
    return runs


def canonical_decomposition(cp):
    d = unicodedata.decomposition(chr(cp))
    if not d or d.startswith('<'):
        return None
    return [int(x, 16) for x in d.split()]


def u8_rows(values, per_line=20):
    lines = []
    for i in range(0, len(values), per_line):
        lines.append('    ' + ','.join(f'{v}' for v in values[i:i + per_line]) + ',')
    return '\n'.join(lines)


def tables():
    cats = [unicodedata.category(chr(cp)) for cp in range(MAX)]
    letters = ranges(cp for cp in range(MAX) if cats[cp][0] == 'L')
    numbers = ranges(cp for cp in range(MAX) if cats[cp][0] == 'N')
    white = ranges(perl_set('White_Space'))
    word = ranges(perl_set('Word'))
    ccc = []  # (start, end, class) runs of equal non-zero class
    for cp in range(MAX):
        c = unicodedata.combining(chr(cp))
        if not c:
            continue
        if ccc and ccc[-1][1] == cp - 1 and ccc[-1][2] == c:
            ccc[-1][1] = cp
        else:
            ccc.append([cp, cp, c])
    decomp = []  # cp, first, second (0 = singleton), composes
    for cp in range(MAX):
        if 0xAC00 <= cp <= 0xD7A3:
            continue  # Hangul syllables decompose algorithmically
        d = canonical_decomposition(cp)
        if d is None:
            continue
        assert 1 <= len(d) <= 2
        composes = len(d) == 2 and unicodedata.normalize('NFC', chr(cp)) == chr(cp)
        decomp.append((cp, d[0], d[1] if len(d) == 2 else 0, composes))
    folds = fold_runs(simple_folds())

    # Each table is a stream of LEB128 varints (deltas where they are small), decoded once at first use by
    # unicode.cpp into the arrays it searches: 34 KB of uint32/uint64 arrays take 13 KB this way.
    def varints(values):
        out = bytearray()
        for v in values:
            assert v >= 0
            while True:
                b = v & 0x7F
                v >>= 7
                out.append(b | (0x80 if v else 0))
                if not v:
                    break
        return out

    def zigzag(v):
        return (v << 1) if v >= 0 else ((-v << 1) - 1)

    def stream(name, what, count, data):
        return (f'// {what}: {count} entries, {len(data)} bytes.\n'
                f'const std::uint8_t {name}[] = {{\n{u8_rows(data)}\n}};\n'
                f'const std::size_t {name}Bytes = {len(data)}, {name}Count = {count};\n')

    def range_stream(rs):
        vals, expected = [], 0
        for first, last in rs:
            vals += [first - expected, last - first]
            expected = last + 1
        return varints(vals)

    ccc_vals, expected = [], 0
    for first, last, c in ccc:
        ccc_vals += [first - expected, last - first, c]
        expected = last + 1
    dec_vals, prev = [], -1
    for cp, a, b, c in decomp:
        dec_vals += [((cp - prev - 1) << 1) | int(c), zigzag(cp - a), b]
        prev = cp
    fold_vals, prev = [], 0
    for first, n, stride, d in folds:
        fold_vals += [first - prev, n, stride, zigzag(d)]
        prev = first
    out = [
        '// Generated by scripts/gen-unicode-tables.py from the Unicode Character Database '
        f'{UNICODE_VERSION} (Python\'s unicodedata and Perl\'s Unicode::UCD). Do not edit: run the script.',
        '#include "unicode_tables.h"',
        '',
        'namespace attnlab::tokenizer::tables {',
        '',
        f'const char kUnicodeVersion[] = "{UNICODE_VERSION}";',
        '',
        '// Ranges [first, last] of code points, as varints: first - (previous last + 1), last - first.',
        stream('kLetter', 'General_Category L (Lu, Ll, Lt, Lm, Lo)', len(letters), range_stream(letters)),
        stream('kNumber', 'General_Category N (Nd, Nl, No)', len(numbers), range_stream(numbers)),
        stream('kWhiteSpace', 'White_Space', len(white), range_stream(white)),
        stream('kWord', 'Word characters of UTS #18: Alphabetic, M, Nd, Pc, Join_Control', len(word), range_stream(word)),
        '// Runs of one non-zero Canonical_Combining_Class: first - (previous last + 1), last - first, class.',
        stream('kCombiningClass', 'Canonical_Combining_Class', len(ccc), varints(ccc_vals)),
        '// Canonical decompositions, one step, by code point: (cp - previous cp - 1) << 1 | composes, zigzag(cp - first),',
        '// second (0 for a singleton). `composes`: the pair is a primary composite (NFC recomposes it).',
        stream('kDecomposition', 'Canonical decompositions', len(decomp), varints(dec_vals)),
        '// Simple case folding (CaseFolding.txt, statuses C and S) in runs: first - previous first, count, stride,',
        '// zigzag(delta): first + i * stride folds to itself + delta, for i below count.',
        stream('kCaseFold', 'Simple case folding runs', len(folds), varints(fold_vals)),
        '}  // namespace attnlab::tokenizer::tables',
        '',
    ]
    return '\n'.join(out)


def literal(s):
    # Hex escapes end at the first non-hex character, so each byte is its own literal piece.
    return ' '.join(f'"\\x{b:02x}"' for b in s.encode('utf-8')) or '""'


def cases():
    """NFC test vectors: every canonically decomposable character given decomposed, each with combining marks
    in a scrambled order, Hangul syllables as jamo, and random runs of starters and marks; NFC from Python."""
    rng = random.Random(14)
    marks = [cp for cp in range(0x300, 0x370)] + [0x0591, 0x05B0, 0x0A3C, 0x0E38, 0x1DC0, 0x20D0, 0x302A, 0x3099, 0x309A]
    bases = ['a', 'e', 'o', 'u', 'A', 'E', 'O', 'S', 'z', 'ᄀ', '가', 'ω', 'Α', 'и', 'ק', 'क', 'か', 'ウ', 'ḁ']
    inputs = []
    for cp in range(MAX):
        if canonical_decomposition(cp) is not None and rng.random() < 0.25:
            inputs.append(unicodedata.normalize('NFD', chr(cp)))
            inputs.append(chr(cp))
    for _ in range(300):
        s = ''.join(rng.choice(bases) + ''.join(chr(rng.choice(marks)) for _ in range(rng.randint(0, 3)))
                    for _ in range(rng.randint(1, 4)))
        inputs.append(s)
    for _ in range(60):
        inputs.append(chr(0x1100 + rng.randint(0, 18)) + chr(0x1161 + rng.randint(0, 20)) +
                      (chr(0x11A8 + rng.randint(0, 26)) if rng.random() < 0.6 else '') + rng.choice(['', 'a', chr(0x301)]))
    rows = [f'    {{{literal(s)}, {literal(unicodedata.normalize("NFC", s))}}},' for s in inputs]
    return '\n'.join([
        '// Generated by scripts/gen-unicode-tables.py: strings and their NFC as Python\'s unicodedata '
        f'({UNICODE_VERSION}) computes it. Do not edit: run the script.',
        '#pragma once',
        '',
        'struct NfcCase {',
        '  const char* input;',
        '  const char* nfc;',
        '};',
        '',
        'inline const NfcCase kNfcCases[] = {',
        *rows,
        '};',
        '',
    ])


def main():
    check = '--check' in sys.argv[1:]
    versions = {'python': unicodedata.unidata_version, 'perl': perl_version()}
    if any(v != UNICODE_VERSION for v in versions.values()):
        sys.exit(f'gen-unicode-tables: the tables are Unicode {UNICODE_VERSION}, this machine has {versions} '
                 '(Debian 12\'s /usr/bin/python3 and perl): run it there, or update UNICODE_VERSION and '
                 'regenerate both files together')
    stale = []
    for path, text in ((TABLES, tables()), (CASES, cases())):
        if check:
            if not path.exists() or path.read_text(encoding='utf-8') != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text, encoding='utf-8')
    if stale:
        sys.exit(f'gen-unicode-tables: {", ".join(stale)} {"differs" if len(stale) == 1 else "differ"} from what '
                 'scripts/gen-unicode-tables.py writes: '
                 'run it (/usr/bin/python3 scripts/gen-unicode-tables.py) and commit the result')


if __name__ == '__main__':
    main()
