#!/usr/bin/env python3
"""gen_consts.py HEADER OUT - write redtune/_consts.py from include/redtune.h.

The Python package never spells a value of the C API by hand: ninja runs this on the header
(`ninja python`), and python/tests/test_cpu_consts.py checks the result against the header and
the library. It reads what the header defines in its own simple forms:

    #define RT_NAME  VALUE      an integer (result codes, flags, limits) or a string
    typedef enum rt_X { RT_A = 0, RT_B, ..., RT_X_COUNT } rt_X;

and fails, naming the line, on an enum member it cannot evaluate, so a new form in the header
is noticed here rather than guessed at.
"""
import re
import sys

DEFINE = re.compile(r'^\s*#\s*define\s+(RT_[A-Z0-9_]+)\s+(-?(?:0x[0-9a-fA-F]+|[0-9]+))u?\b')
DEFINE_STR = re.compile(r'^\s*#\s*define\s+(RT_[A-Z0-9_]+)\s+"([^"]*)"')
ENUM = re.compile(r'typedef\s+enum\s+(rt_[a-z_]+)\s*\{(.*?)\}', re.S)


def parse(text):
    """The header's integer and string macros and its enums, as
    ({name: int}, {name: str}, {enum_name: [(member, value)]})."""
    ints, strs, enums = {}, {}, {}
    for line in text.splitlines():
        m = DEFINE.match(line)
        if m:
            ints[m.group(1)] = int(m.group(2), 0)
            continue
        m = DEFINE_STR.match(line)
        if m:
            strs[m.group(1)] = m.group(2)
    for m in ENUM.finditer(text):
        body = re.sub(r'/\*.*?\*/', '', m.group(2), flags=re.S)
        members, value = [], -1
        for item in (s.strip() for s in body.split(',')):
            if not item:
                continue
            name, _, expr = (x.strip() for x in item.partition('='))
            if not re.fullmatch(r'RT_[A-Z0-9_]+', name):
                raise ValueError("enum %s: cannot read member %r" % (m.group(1), item))
            if expr:
                if not re.fullmatch(r'-?[0-9]+', expr):
                    raise ValueError("enum %s: %s = %s is not an integer" % (m.group(1), name, expr))
                value = int(expr)
            else:
                value += 1
            members.append((name, value))
        enums[m.group(1)] = members
    return ints, strs, enums


def render(header_name, ints, strs, enums):
    out = ['"""The constants of %s, written by python/gen_consts.py; do not edit."""' % header_name,
           '']
    for name, value in strs.items():
        out.append('%s = %r' % (name, value))
    for name, value in ints.items():
        out.append('%s = %d' % (name, value))
    for enum, members in enums.items():
        out.append('')
        out.append('# typedef enum %s' % enum)
        for name, value in members:
            out.append('%s = %d' % (name, value))
    # The tables the package works from: result codes by value, operators and types by the
    # names rt_op_name / rt_type_name give (the lower-case member name without RT_).
    codes = [n for n in ints if n == 'RT_OK' or re.fullmatch(r'RT_E[A-Z]+', n)]
    out.append('')
    out.append('ERROR_NAMES = {%s}' % ', '.join('%s: %r' % (n, n) for n in codes))
    for enum, table in (('rt_op', 'OPS'), ('rt_type', 'TYPES')):
        members = [(n, v) for n, v in enums.get(enum, [])
                   if not n.endswith('_COUNT') and not n.endswith('_')]
        out.append('%s = {%s}' % (table, ', '.join('%r: %s' % (n[3:].lower(), n)
                                                   for n, _ in members)))
    return '\n'.join(out) + '\n'


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: gen_consts.py HEADER OUT\n")
        return 2
    with open(argv[1], encoding='utf-8') as f:
        text = f.read()
    try:
        ints, strs, enums = parse(text)
    except ValueError as err:
        sys.stderr.write("gen_consts.py: %s: %s\n" % (argv[1], err))
        return 1
    for need in ('rt_op', 'rt_type'):
        if need not in enums:
            sys.stderr.write("gen_consts.py: %s: no typedef enum %s\n" % (argv[1], need))
            return 1
    with open(argv[2], 'w', encoding='utf-8') as f:
        f.write(render('include/redtune.h', ints, strs, enums))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
