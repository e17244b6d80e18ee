/*
 * peers.h - the times of other libraries for the cases of a database, read from the CSV files
 * the benches write (redtune_bench's flat, --every-n and --axis modes: CUB; bench/torch_axis.py:
 * PyTorch eager and Inductor), for `redtune report --peers FILE` to draw beside the winners.
 * The bench's CSV is the record: nothing is copied into the database. docs/results-format.md
 * says which columns each kind of file must have.
 */
#ifndef RT_PEERS_H
#define RT_PEERS_H

#include "../runtime/err.h"

/* One timing of a peer for one case of one device. */
typedef struct peer_row {
    char device[128];        /* the GPU's name as the bench printed it */
    char op[64], type[16];
    char result[16];         /* "" when the file does not say (any result matches) */
    char layout[96];         /* "flat" or "axis:OxLxI", as in the database */
    int hot;
    long long n;             /* elements (an axis case: outer * len * inner) */
    char who[48];            /* "CUB", "PyTorch eager", "PyTorch Inductor" */
    char call[96];           /* what was timed, as the bench names it ("" if it does not) */
    double us, gbps;         /* median; bytes / median as the bench counted the bytes */
    const char *file;        /* the path given (points into the caller's argv) */
    int line;                /* its line in the file */
    int used;                /* set by the report when a chart drew it */
} peer_row;

typedef struct peer_set {
    peer_row *v;
    int n, cap;
} peer_set;

/*
 * Append the timed rows of the bench CSV at 'path' to 'p' (rows whose peer did not run or
 * was wrong are left out: a chart shows times, not failures). RT_EIO when it cannot be
 * read; RT_EINVAL naming the file and line for anything it does not understand: a header
 * of no known bench (the missing columns named), a row with another number of fields, a
 * number or name that is not one. 'p' is left as it was on failure.
 */
int peers_load(peer_set *p, const char *path, rt_err *e);

void peers_free(peer_set *p);

#endif
