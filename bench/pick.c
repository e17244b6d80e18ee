/*
 * pick.c - the library's pick, read back from rt_explain's text (pick.h). The text is made
 * for people; these readers follow its lines as runtime/ writes them and report -1, not a
 * guess, when a line is not found, so that the bench then shows the text as it is.
 */
#include "pick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rest of the first line that starts with 'prefix' after leading blanks, into
 * out[0..len); 0 when found. */
static int line_after(const char *text, const char *prefix, char *out, size_t len)
{
    size_t pl = strlen(prefix);
    for (const char *l = text; l && *l;) {
        const char *s = l;
        while (*s == ' ')
            s++;
        const char *end = strchr(s, '\n');
        size_t ll = end ? (size_t)(end - s) : strlen(s);
        if (ll >= pl && !strncmp(s, prefix, pl)) {
            size_t n = ll - pl < len - 1 ? ll - pl : len - 1;
            memcpy(out, s + pl, n);
            out[n] = '\0';
            return 0;
        }
        l = end ? end + 1 : NULL;
    }
    return -1;
}

/* "FAMILY PARAMS (... HASHWORD HASH)" -> family, params, hash; 'hashword' is "hash " or
 * "kernel ". 0 when all three were found. */
static int read_kernel(const char *k, const char *hashword, bench_pick *p)
{
    const char *paren = strrchr(k, '(');
    if (!paren || paren == k || paren[-1] != ' ')
        return -1;
    const char *sp = strchr(k, ' ');
    size_t fl = (size_t)(sp - k);
    if (fl == 0 || fl >= sizeof p->family)
        return -1;
    memcpy(p->family, k, fl);
    p->family[fl] = '\0';
    size_t pl = sp < paren - 1 ? (size_t)(paren - 1 - (sp + 1)) : 0;
    if (pl >= sizeof p->params)
        return -1;
    memcpy(p->params, sp + 1, pl);
    p->params[pl] = '\0';
    const char *h = strstr(paren, hashword);
    if (!h)
        return -1;
    h += strlen(hashword);
    size_t hl = strcspn(h, ")");
    if (hl == 0 || hl >= sizeof p->hash)
        return -1;
    memcpy(p->hash, h, hl);
    p->hash[hl] = '\0';
    return 0;
}

/* Copy s[0..n) into dst[0..size), NUL-terminated; -1 when it does not fit. */
static int copy_n(char *dst, size_t size, const char *s, size_t n)
{
    if (n >= size)
        return -1;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 0;
}

/* "the winner of NAME, an operator of the same cost" or "the winner of OP TYPE, a type of the
 * same width" anywhere in the text (the runtime's api_kin_note) -> p->kin. */
static void read_kin(const char *text, bench_pick *p)
{
    const char *k = strstr(text, "the winner of ");
    const char *e = k ? strstr(k, ", an operator of the same cost") : NULL;
    if (k && !e)
        e = strstr(k, ", a type of the same width");
    if (e && copy_n(p->kin, sizeof p->kin, k + 14, (size_t)(e - (k + 14))))
        p->kin[0] = '\0';
}

int bench_pick_parse(const char *text, bench_pick *p)
{
    char line[1024];
    memset(p, 0, sizeof *p);
    if (!text || line_after(text, "kernel: ", line, sizeof line) || read_kernel(line, "hash ", p))
        return -1;
    if (line_after(text, "fallback level: ", line, sizeof line))
        return -1;
    char *paren = strstr(line, " (");
    if (copy_n(p->level, sizeof p->level, line, paren ? (size_t)(paren - line) : strlen(line)))
        return -1;
    if (line_after(text, "database entry: ", line, sizeof line))
        return -1;
    if (!strncmp(line, "device \"", 8)) {
        const char *d = line + 8, *q = strstr(d, "\" (");
        const char *tn = strstr(line, "tuned n = "), *med = strstr(line, "median ");
        if (!q || !tn || !med || copy_n(p->device, sizeof p->device, d, (size_t)(q - d)))
            return -1;
        p->tuned_n = atoll(tn + 10);
        p->tuned_median_us = atof(med + 7);
        if (p->tuned_n <= 0)
            return -1;
    } else if (strncmp(line, "none", 4) != 0) {
        return -1;
    }
    if (line_after(text, "CUBIN: ", line, sizeof line))
        return -1;
    p->from_db = !strncmp(line, "from the database", 17);
    if (!p->from_db && !strstr(line, "NVRTC"))
        return -1;
    read_kin(text, p);
    p->parsed = 1;
    return 0;
}

int bench_pick_parse_seg(const char *text, bench_pick *p)
{
    char line[1024];
    memset(p, 0, sizeof *p);
    if (!text)
        return -1;
    /* The first line: "keys min f32 n=N nseg=S: FAMILY PARAMS (plan segmented, kernel H)"; for
     * one segment "... nseg=1: one segment, ...: FAMILY PARAMS (plan onelaunch, kernel H)"
     * (the kernel after the line's last ": "). */
    const char *nl = strchr(text, '\n'), *colon = NULL;
    for (const char *c = strstr(text, ": "); c && nl && c < nl; c = strstr(c + 2, ": "))
        colon = c;
    if (!colon || !nl)
        return -1;
    const char *one = strstr(text, "nseg=1: one segment");
    p->flat = one && one < nl;
    if (copy_n(line, sizeof line, colon + 2, (size_t)(nl - (colon + 2)))
        || read_kernel(line, "kernel ", p))
        return -1;
    if (line_after(text, "level: ", line, sizeof line)
        || copy_n(p->level, sizeof p->level, line, strlen(line)))
        return -1;
    if (line_after(text, "from: ", line, sizeof line))
        return -1;
    /* "tuned on DEVICE at n = N, mean segment length M: X us ...", or for one segment "the
     * flat winner[ of a @bounds family nearest to n] tuned on DEVICE at n = N: X us ..." (no
     * mean); else "no tuned entry" / "no tuned flat entry...". */
    const char *d = strstr(line, "tuned on ");
    if (d && (p->flat || d == line)) {
        const char *at = strstr(d += 9, " at n = ");
        const char *mean = p->flat ? NULL : strstr(line, "mean segment length "), *us;
        if (!at || (!p->flat && !mean) || copy_n(p->device, sizeof p->device, d, (size_t)(at - d)))
            return -1;
        p->tuned_n = atoll(at + 8);
        p->tuned_mean = mean ? atof(mean + 20) : 0;
        us = strchr(mean ? mean + 20 : at + 8, ':');
        if (!us || p->tuned_n <= 0)
            return -1;
        p->tuned_median_us = atof(us + 1);
        p->respecialised = strstr(line, "re-specialised") != NULL;
    } else if (strncmp(line, "no tuned", 8) != 0) {
        return -1;
    }
    if (line_after(text, "binary: ", line, sizeof line))
        return -1;
    p->from_db = !strncmp(line, "CUBIN from the database", 23);
    if (!p->from_db && !strstr(line, "NVRTC"))
        return -1;
    read_kin(text, p);
    p->parsed = 1;
    return 0;
}

int bench_pick_axis_tuned(const char *text, char *buf, size_t len)
{
    char line[1024];
    if (!len)
        return -1;
    buf[0] = '\0';
    if (!text || line_after(text, "database entry: ", line, sizeof line))
        return -1;
    if (!strncmp(line, "none", 4)) {
        snprintf(buf, len, "built-in default");
        return 0;
    }
    const char *a = strncmp(line, "device \"", 8) ? NULL : strstr(line, "tuned shape axis:");
    if (!a)
        return -1;
    a += strlen("tuned shape ");
    return copy_n(buf, len, a, strcspn(a, " ,;)"));
}

void bench_fmt_n(long long n, char *buf, size_t len)
{
    if (n > 0 && (n & (n - 1)) == 0)
        snprintf(buf, len, "2^%d", __builtin_ctzll((unsigned long long)n));
    else if (n > 0 && n % (1LL << 20) == 0)
        snprintf(buf, len, "%lld*2^20", n >> 20);
    else
        snprintf(buf, len, "%lld", n);
}

void bench_pick_lookup(const bench_pick *p, long long n, char *buf, size_t len)
{
    char tn[32];
    if (!p->parsed) {
        snprintf(buf, len, "see rt_explain");
        return;
    }
    if (!p->device[0] || p->tuned_n <= 0) {
        snprintf(buf, len, "%s", p->level);
        return;
    }
    bench_fmt_n(p->tuned_n, tn, sizeof tn);
    const char *how = p->tuned_n == n ? "exact" : "nearest ";
    char kin[64] = "";
    if (p->kin[0])
        snprintf(kin, sizeof kin, ", %s's winner", p->kin);
    if (!strcmp(p->level, "exact device"))
        snprintf(buf, len, "%s%s%s", how, p->tuned_n == n ? "" : tn, kin);
    else
        snprintf(buf, len, "%s \"%s\", %s%s%s", p->level, p->device, how,
                 p->tuned_n == n ? "" : tn, kin);
}
