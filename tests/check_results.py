#!/usr/bin/env python3
"""check_results.py - structural checks of redtune's results outputs, for tests/test_report.c.

    check_results.py csv FILE ROWS            RFC 4180 with a header; ROWS data rows
    check_results.py json FILE WHAT ROWS      the documented schema (docs/results-format.md)
    check_results.py report FILE CASE...      well-formed XML, self-contained, every case there

Prints what is wrong and exits 1; exits 0 quietly when all is well.
"""
import csv
import json
import sys
import xml.etree.ElementTree as ET

HEADER = ("device,arch,uuid,read_gbps,op,type,acc,result,n,layout,hot,segments,seg_mean,seg_spread,"
          "family,params,kernel,median_us,min_us,max_us,reps,gbps,read_pct,status,message,"
          "verified,deterministic,deterministic_checked,run_id,run_started_at,run_ended_at,"
          "measured_at").split(",")
ROW_KEYS = {"device", "case", "family", "params", "parameters", "kernel", "median_us",
            "min_us", "max_us", "reps", "gbps", "read_pct", "status", "message", "verified",
            "deterministic", "deterministic_checked", "run", "measured_at"}


def fail(msg):
    print(f"check_results: {msg}")
    sys.exit(1)


def check_csv(path, rows):
    with open(path, newline="") as f:
        data = f.read()
    if not data.endswith("\r\n"):
        fail(f"{path}: lines do not end in CRLF")
    table = list(csv.reader(data.splitlines(keepends=True), strict=True))
    if table[0] != HEADER:
        fail(f"{path}: header {table[0]}")
    if len(table) - 1 != rows:
        fail(f"{path}: {len(table) - 1} rows, not {rows}")
    for r in table[1:]:
        if len(r) != len(HEADER):
            fail(f"{path}: a row of {len(r)} fields: {r}")


def check_json(path, what, rows):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("format") != "redtune-results" or doc.get("version") != 1 \
            or doc.get("what") != what:
        fail(f"{path}: header {dict((k, v) for k, v in doc.items() if k != 'rows')}")
    if len(doc["rows"]) != rows:
        fail(f"{path}: {len(doc['rows'])} rows, not {rows}")
    for r in doc["rows"]:
        if set(r) != ROW_KEYS:
            fail(f"{path}: keys {sorted(r)}")
        if set(r["device"]) != {"name", "arch", "uuid", "read_gbps"} \
                or set(r["case"]) != {"op", "type", "acc", "result", "n", "layout", "hot",
                                     "segmentation"}:
            fail(f"{path}: device or case {r['device']} {r['case']}")
        if not isinstance(r["parameters"], dict) or not isinstance(r["verified"], bool) \
                or not isinstance(r["case"]["hot"], bool):
            fail(f"{path}: types in {r}")
        seg = r["case"]["segmentation"]
        if (seg is None) != (r["case"]["layout"] == "flat"):
            fail(f"{path}: segmentation {seg} of layout {r['case']['layout']}")


def check_report(path, cases):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for bad in ("http://", "https://", "<script", "<link", "@import", "url("):
        if bad in text.lower():
            fail(f"{path}: holds '{bad}'")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        fail(f"{path}: not well-formed: {e}")
    found = [s.get("data-case") for s in root.iter("section") if s.get("class") == "case"]
    for c in cases:
        if c not in found:
            fail(f"{path}: no section of case '{c}' (found: {found})")
    for s in root.iter("section"):
        if s.get("class") == "case" and s.find("svg") is None:
            fail(f"{path}: case '{s.get('data-case')}' has no chart")
    for el in root.iter():
        for k, v in el.attrib.items():
            if k in ("src", "href") or k.endswith("}href"):
                fail(f"{path}: a reference {k}={v}")


def main(argv):
    if len(argv) >= 4 and argv[1] == "csv":
        check_csv(argv[2], int(argv[3]))
    elif len(argv) >= 5 and argv[1] == "json":
        check_json(argv[2], argv[3], int(argv[4]))
    elif len(argv) >= 3 and argv[1] == "report":
        check_report(argv[2], argv[3:])
    else:
        fail(__doc__)


if __name__ == "__main__":
    main(sys.argv)
