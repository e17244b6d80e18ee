/*
 * capture.h - what libredtune records about the cases an application meets (REDTUNE_CAPTURE)
 * and what it says about its choices on stderr (REDTUNE_LOG). docs/api.md describes both;
 * the capture file's format is read back by the tuner's tuner/cases.c (`--cases-from`).
 */
#ifndef RT_CAPTURE_H
#define RT_CAPTURE_H

#include <pthread.h>
#include <stdio.h>

/* The first line of every capture file; a later version changes the number. */
#define CAPTURE_MAGIC "# redtune capture v"
#define CAPTURE_VERSION 1
#define CAPTURE_HEADER "# redtune capture v1\n" \
    "# op\ttype\tlayout\tn\tnseg\tfallback\tfingerprint\tdevice\n"
#define CAPTURE_FIELDS 8
#define CAPTURE_MAX_CASES 65536   /* distinct cases remembered per context */

enum { CAPTURE_LOG_OFF, CAPTURE_LOG_WARN, CAPTURE_LOG_INFO };

/* One context's recorder. 'active' says whether a reduction needs to look at all (capture
 * on, or the log at info); everything else is under 'lock'. */
typedef struct capture {
    int active;
    int log;                      /* CAPTURE_LOG_* */
    FILE *err;                    /* where log lines go: stderr (tests change it) */
    char *path;                   /* REDTUNE_CAPTURE; NULL: not capturing */
    int fd;                       /* -1 until the first line; -2 once given up */
    int full_said;
    pthread_mutex_t lock;
    unsigned long long *seen;     /* hashes of the cases met, open addressing; 0 is free */
    size_t nseen, cap;
} capture;

/* The type field of a capture line for (op, spec): the element type's name, then the parts
 * of the spec that differ from the operator's defaults (optype_resolve's canon):
 * "bf16", "bf16:acc=f64", "bf16:acc=f32:result=bf16" (result=, when present, is the element
 * type: RT_RESULT_ELEM). A version 1 reader that knows only plain types refuses the longer
 * ones by name. "?" for a spec that does not resolve. Returns buf. */
const char *capture_type_text(int op, int spec, char *buf, size_t len);

/* One case of a call. 'fingerprint' is a user operator's definition id, else NULL. */
typedef struct capture_case {
    const char *op, *type, *layout;   /* layout: flat, keys or offsets; type: a spec's text
                                       * (capture_type_text) */
    unsigned long long n, nseg;       /* nseg 0 for flat */
    const char *fallback;             /* NULL: an exact tuned entry (not written) */
    const char *fingerprint;
    const char *device;
} capture_case;

/* Read REDTUNE_CAPTURE and REDTUNE_LOG (a bad REDTUNE_LOG value is warned about on 'err'
 * once per process); log lines go to 'err' (stderr). Nothing is opened yet. */
void capture_init(capture *c, FILE *err);
void capture_close(capture *c);

/* A case a call met, once per distinct case: a capture line when it had no exact entry
 * (cs->fallback set), and with the log at info a line on 'err'. Never fails: a file that
 * cannot be opened or written is warned about once and capturing stops. */
void capture_case_met(capture *c, const capture_case *cs);

/* A line on c->err, "redtune: warn: ..." or "redtune: info: ...", when the log level is
 * 'level' or more. */
void capture_log(capture *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The capture line of a case (with its newline) into buf; its length, or 0 when it does not
 * fit. Tabs, newlines and other control characters of the fields become spaces. */
size_t capture_format(const capture_case *cs, char *buf, size_t len);

#endif
