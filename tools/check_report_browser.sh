#!/usr/bin/env bash
# check_report_browser.sh [DUMP] [PNG] - `redtune report` in a real browser: the shipped
# database (or DUMP, a `redtune dump` file) loaded into a scratch database, its report written,
# opened headless by Chromium as XHTML (so that any XML error shows as a parser error page) and
# as HTML; the rendered DOM must hold every <svg> of the file and no parser error. With PNG, a
# screenshot of the HTML rendering is kept there (docs/report-h100.png is one). TAP lines; a
# SKIP where no Chromium is installed (Debian's `chromium` package; not a dependency of the
# build).
set -u
cd "$(dirname "$0")/.."
dump=${1:-db/tuned/h100.sql}
png=${2:-}
browser=
for b in chromium chromium-browser google-chrome; do
    command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
if [ -z "$browser" ]; then
    echo "not ok 1 # SKIP report in a browser: no chromium installed"
    exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if ! build/redtune load "$dump" -o "$dir/r.db" >"$dir/load.log" 2>&1 \
   || ! build/redtune report --db "$dir/r.db" -o "$dir/r.xhtml" >"$dir/report.log" 2>&1; then
    echo "not ok 1 - report in a browser: making the report failed"
    sed 's/^/#   /' "$dir/load.log" "$dir/report.log"
    exit 1
fi
cp "$dir/r.xhtml" "$dir/r.html"
want=$(grep -o '<svg' "$dir/r.xhtml" | wc -l)
status=0
n=0
for kind in xhtml html; do
    n=$((n + 1))
    # --no-sandbox: CI and the tests run as root; nothing but this local file is opened.
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --dump-dom \
        "file://$dir/r.$kind" >"$dir/dom.$kind" 2>"$dir/err.$kind"
    rc=$?
    got=$(grep -o '<svg' "$dir/dom.$kind" | wc -l)
    if [ $rc -ne 0 ]; then
        echo "not ok $n - report in a browser ($kind): $browser exited with status $rc"
        tail -n 3 "$dir/err.$kind" | sed 's/^/#   /'
        status=1
    elif grep -q 'parsererror' "$dir/dom.$kind"; then
        echo "not ok $n - report in a browser ($kind): the browser found the file malformed:"
        grep -o 'parsererror.\{0,300\}' "$dir/dom.$kind" | head -n 2 | sed 's/^/#   /'
        status=1
    elif [ "$want" -eq 0 ] || [ "$got" -ne "$want" ]; then
        echo "not ok $n - report in a browser ($kind): $got of the file's $want pictures rendered"
        status=1
    else
        echo "ok $n - report in a browser ($kind): $browser renders all $want pictures of $dump's report"
    fi
done
if [ -n "$png" ]; then
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1200,1800 --screenshot="$png" "file://$dir/r.html" >/dev/null 2>&1
fi
exit $status
