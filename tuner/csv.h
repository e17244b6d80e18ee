/*
 * csv.h - the CSV files redtune reads (the benches' files for `report --peers`, the
 * measurements for `replay`) and the fields it writes (`best`/`measurements --format csv`,
 * `replay --format csv`): RFC 4180 (commas, double quotes doubled inside quoted fields, LF or
 * CRLF line ends), a header row naming the columns, found by name so that a writer may add
 * columns without breaking a reader. Written here rather than taken from a library: Debian's
 * libcsv is unmaintained since 2013, and the files redtune reads are the plain form
 * (bench/common.cu csv_field, Python's csv module, tuner/results.c).
 */
#ifndef RT_CSV_H
#define RT_CSV_H

#include <stddef.h>
#include <stdio.h>
#include "../runtime/err.h"

#define CSV_MAX_BYTES (256u << 20)   /* the files are kilobytes to megabytes: refuse absurd */
#define CSV_MAX_FIELDS 64

typedef struct csv {
    const char *who;        /* the messages' prefix: "--peers", "replay" */
    const char *path;
    char *buf;              /* the file, NUL-terminated */
    size_t len, pos;
    int line;               /* of the record last read (its first line) */
    int next_line;
    char *f[CSV_MAX_FIELDS];   /* the record's fields, unquoted, in 'rec' */
    int nf;
    char *rec;              /* scratch as large as the file */
} csv;

/* Read the whole file. RT_EIO when it cannot be read; RT_EINVAL when it is too large or holds
 * a NUL byte ("WHO PATH: ..."). csv_close it either way. */
int csv_open(csv *c, const char *who, const char *path, rt_err *e);
void csv_close(csv *c);

/* The next record into c->f[0 .. nf-1]: 1, or 0 at the end of the file; blank lines are
 * skipped. A quoted field may hold commas, line ends and doubled quotes. A malformed record
 * is RT_EINVAL naming "WHO PATH:LINE". */
int csv_next(csv *c, rt_err *e);

/* The index of the field named 'name' in the record last read (the header), or -1. */
int csv_column(const csv *c, const char *name);

/* Write one field: as it is, or quoted (quotes doubled) when it holds a comma, a quote or a
 * line end; NULL writes an empty field. */
void csv_put_field(FILE *out, const char *v);

#endif
