/*
 * results.h - the results of a database as data and pictures: `redtune best --format csv|json`,
 * `redtune measurements` (tuner/results.c) and `redtune report` (tuner/report_html.c). The
 * formats and the JSON schema are documented in docs/results-format.md.
 */
#ifndef RT_RESULTS_H
#define RT_RESULTS_H

#include <stdio.h>
#include "../runtime/err.h"

typedef enum results_format {
    RESULTS_TABLE,   /* aligned text for a terminal (best: today's table) */
    RESULTS_CSV,     /* RFC 4180: a header row, CRLF line ends, quoted where needed */
    RESULTS_JSON     /* one document made by SQLite's JSON functions */
} results_format;

/* "table", "csv", "json" into a results_format; -1 for anything else. */
int results_parse_format(const char *name);

/* Which rows: NULL (or n <= 0) means any. The device match is a substring of the device
 * name, ignoring ASCII case, as `redtune best --device` has it. */
typedef struct results_filter {
    const char *device_match;
    const char *op;
    const char *type;
    long long n;
    const char *acc;     /* the accumulator's type name (column acc) */
} results_filter;

/*
 * Print the rows of table best (best = 1) or table measurements (best = 0) of 'db_path'
 * selected by 'f' to 'out' in 'fmt'. A table with no rows is RT_ENOTFOUND (as `redtune best`
 * has it); CSV and JSON with no rows are documents without rows, and RT_OK. *refused is set
 * when the database itself was refused (RT_EDB from store_open).
 */
int cmd_results(const char *db_path, int best, const results_filter *f, results_format fmt,
                FILE *out, int *refused, rt_err *e);

/*
 * `redtune report`: one self-contained HTML file (inline SVG, nothing fetched) with a section
 * per device of 'db_path' whose name holds 'device_match' (NULL: every device), written whole
 * into 'out' (an existing file only with 'force'; never the database itself, nor through a
 * symbolic link). 'peer_files' (npeer_files of them) are benches' CSV files whose rows for
 * the same device and case are drawn beside the winners (tuner/peers.h). *refused: 1 when
 * the database was refused (as cmd_results), 2 when a peers file was (unreadable, not a
 * bench's CSV, a bad line); nothing is written then.
 */
int cmd_report(const char *db_path, const char *device_match, const char *out, int force,
               const char *const *peer_files, int npeer_files, int *refused, rt_err *e);

#endif
