/*
 * pick.h - the library's pick for a case, read back from the text of rt_explain or
 * rt_explain_segmented (include/redtune.h), so that redtune_bench reports what the library
 * chose (family, parameters, hash, the database entry it came from, the fallback level, the
 * CUBIN's origin) through the public API alone. Plain C: tests/test_bench_pick.c checks it
 * against the text runtime/ writes.
 */
#ifndef BENCH_PICK_H
#define BENCH_PICK_H

#include <stddef.h>

typedef struct bench_pick {
    int parsed;               /* 1: the fields below were found; 0: only the text is known */
    char family[64];
    char params[256];
    char hash[16];            /* the first 12 hex digits of the kernel's hash */
    char level[64];           /* "exact device", "same compute capability",
                                 "same major architecture", "built-in default" */
    char device[128];         /* the device of the database entry; "" without one */
    long long tuned_n;        /* the entry's n; 0 without one */
    double tuned_median_us;   /* the entry's stored median */
    double tuned_mean;        /* segmented: the entry's mean segment length */
    int respecialised;        /* segmented: re-specialised for the offset width/alignment */
    int flat;                 /* segmented: one segment, served by a flat kernel
                                 (docs/segmented.md, "One segment"); tuned_mean 0 */
    int from_db;              /* 1: CUBIN from the database; 0: compiled by NVRTC here */
    char kin[32];             /* the sibling operator whose winner runs ("max" for a min call
                                 with none of its own: docs/api.md); "" when none */
} bench_pick;

/* Read rt_explain's text into *p. 0 when every field was found; -1 otherwise (p->parsed 0,
 * the other fields as far as they were read). */
int bench_pick_parse(const char *text, bench_pick *p);

/* The same for rt_explain_segmented's text. */
int bench_pick_parse_seg(const char *text, bench_pick *p);

/*
 * rt_explain_axis's database entry, into buf[0..len): its tuned shape "axis:OxLxI" where the
 * entry is a winner's ("device ..., tuned shape axis:OxLxI, ..."), "built-in default" where it
 * is "none" (no winner; or "none used", a winner that cannot be made here, whose shape is
 * named but not what runs). 0 when read; -1 otherwise (buf "").
 */
int bench_pick_axis_tuned(const char *text, char *buf, size_t len);

/*
 * How the pick relates to the case of n elements, into buf[0..len): "exact" (the entry of
 * this GPU tuned at n), "nearest N" (of this GPU, tuned at another n), "LEVEL \"DEVICE\",
 * exact|nearest N" (an entry of another GPU, the library's fallback), "built-in default"
 * (no entry); followed by ", max's winner" where the entry is a sibling operator's. N is
 * written 2^k, m*2^20 or as a number.
 */
void bench_pick_lookup(const bench_pick *p, long long n, char *buf, size_t len);

/* n as 2^k, m*2^20 (m not a power of two) or the number, into buf[0..len). */
void bench_fmt_n(long long n, char *buf, size_t len);

#endif
