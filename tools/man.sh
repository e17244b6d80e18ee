#!/usr/bin/env bash
# man.sh REDTUNE > redtune.1 - the manual page of the redtune program, made from its own
# `--help` text (tuner/main.c's usage_text), so the two never disagree. ninja runs it
# (build/redtune.1) and `ninja install` installs the result in share/man/man1.
#
# The help text's layout is the input format: the "usage:" block becomes SYNOPSIS, the
# paragraphs DESCRIPTION, the lines "  NAME   text" (two spaces, the name, two or more spaces)
# tagged paragraphs with their deeper-indented continuation lines, and the paragraph that
# begins "Exit status" the EXIT STATUS section.
set -eu
prog=${1:?usage: man.sh REDTUNE}
version=$("$prog" --version | awk '{print $2}')
"$prog" --help | awk -v version="$version" '
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.\047]/) s = "\\&" s
    return s
}
function flush_tag() {
    if (tag != "") { print ".TP"; print "\\fB" esc(tag) "\\fR"; print esc(tagtext) }
    tag = ""; tagtext = ""
}
BEGIN {
    print ".\\\" redtune.1 - written by tools/man.sh from `redtune --help`; do not edit."
    print ".TH REDTUNE 1 \"\" \"redtune " version "\" \"User Commands\""
    print ".SH NAME"
    print "redtune \\- tune GPU parallel reductions and reduce with the tuned kernels"
    state = "synopsis"
    print ".SH SYNOPSIS"
    print ".nf"
}
state == "synopsis" {
    if ($0 == "") { print ".fi"; print ".SH DESCRIPTION"; state = "body"; next }
    line = $0
    sub(/^usage: /, "", line)
    sub(/^       /, "", line)
    print esc(line)
    next
}
/^$/ { flush_tag(); para = 1; next }
/^  [^ ]/ {
    # "  --op OP        text": the text starts in column 18, or after two spaces when the
    # name is longer than that column allows
    flush_tag()
    if (substr($0, 17, 1) == " " && substr($0, 18, 1) != " " && length($0) > 17) {
        tag = substr($0, 3, 14); sub(/ +$/, "", tag)
        tagtext = substr($0, 18)
    } else {
        head = substr($0, 3)
        split(head, parts, /  +/)
        tag = parts[1]
        tagtext = substr(head, length(parts[1]) + 1); sub(/^ +/, "", tagtext)
    }
    next
}
/^   +[^ ]/ && tag != "" { t = $0; sub(/^ +/, "", t); tagtext = tagtext " " t; next }
{
    flush_tag()
    if (para && $0 ~ /^Exit status/) print ".SH EXIT STATUS"
    else if (para) print ".PP"
    para = 0
    print esc($0)
}
END { flush_tag()
    print ".SH SEE ALSO"
    print "The README.md and docs/ of the redtune sources; docs/api.md for libredtune (redtune.h)."
}'
