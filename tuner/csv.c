/*
 * csv.c - the CSV reader and field writer of csv.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"




int csv_open(csv *c, const char *who, const char *path, rt_err *e)
{
    FILE *fp = NULL;
    long size;
    int rc = RT_OK;

    memset(c, 0, sizeof *c);
    c->who = who;
    c->path = path;
    c->next_line = 1;
    if (!(fp = fopen(path, "rb")))
        return rt_seterr(e, RT_EIO, "%s %s: %s", who, path, strerror(errno));
    if (fseek(fp, 0, SEEK_END) || (size = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET)) {
        rc = rt_seterr(e, RT_EIO, "%s %s: %s", who, path, strerror(errno));
        goto done;
    }
    if ((unsigned long)size > CSV_MAX_BYTES) {
        rc = rt_seterr(e, RT_EINVAL, "%s %s: %ld bytes: such a CSV is far smaller (at "
                       "most %u MiB are read)", who, path, size, CSV_MAX_BYTES >> 20);
        goto done;
    }
    if (!(c->buf = malloc((size_t)size + 1)) || !(c->rec = malloc((size_t)size + 1))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s %s: out of memory", who, path);
        goto done;
    }
    if (fread(c->buf, 1, (size_t)size, fp) != (size_t)size) {
        rc = rt_seterr(e, RT_EIO, "%s %s: %s", who, path, ferror(fp) ? strerror(errno)
                       : "shorter than its size");
        goto done;
    }
    c->buf[size] = '\0';
    c->len = (size_t)size;
    if (memchr(c->buf, '\0', c->len))
        rc = rt_seterr(e, RT_EINVAL, "%s %s: holds a NUL byte: not a CSV text file", who, path);
done:
    if (fp)
        fclose(fp);
    return rc;
}

void csv_close(csv *c)
{
    free(c->buf);
    free(c->rec);
    memset(c, 0, sizeof *c);
}

/* The next record into c->f[0 .. nf-1]: 1, or 0 at the end of the file; blank lines are
 * skipped. A quoted field may hold commas, line ends and doubled quotes. */
int csv_next(csv *c, rt_err *e)
{
    char *w = c->rec;
    const char *p = c->buf + c->pos, *end = c->buf + c->len;

    while (p < end && (*p == '\n' || *p == '\r')) {
        if (*p == '\n')
            c->next_line++;
        p++;
    }
    if (p >= end) {
        c->pos = c->len;
        return 0;
    }
    c->line = c->next_line;
    c->nf = 0;
    for (;;) {
        if (c->nf == CSV_MAX_FIELDS)
            return rt_seterr(e, RT_EINVAL, "%s %s:%d: more than %d fields", c->who, c->path,
                             c->line, CSV_MAX_FIELDS);
        c->f[c->nf++] = w;
        if (p < end && *p == '"') {
            p++;
            for (;;) {
                if (p >= end)
                    return rt_seterr(e, RT_EINVAL, "%s %s:%d: a quoted field is not "
                                     "closed", c->who, c->path, c->line);
                if (*p == '"' && p + 1 < end && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    if (*p == '\n')
                        c->next_line++;
                    *w++ = *p++;
                }
            }
            if (p < end && *p != ',' && *p != '\n' && *p != '\r')
                return rt_seterr(e, RT_EINVAL, "%s %s:%d: field %d: text after its "
                                 "closing quote", c->who, c->path, c->line, c->nf);
        } else {
            while (p < end && *p != ',' && *p != '\n' && *p != '\r') {
                if (*p == '"')
                    return rt_seterr(e, RT_EINVAL, "%s %s:%d: field %d: a quote inside "
                                     "an unquoted field", c->who, c->path, c->line, c->nf);
                *w++ = *p++;
            }
        }
        *w++ = '\0';
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == '\r')
            p++;
        if (p < end && *p == '\n') {
            p++;
            c->next_line++;
        }
        break;
    }
    c->pos = (size_t)(p - c->buf);
    return 1;
}


int csv_column(const csv *c, const char *name)
{
    for (int i = 0; i < c->nf; i++)
        if (!strcmp(c->f[i], name))
            return i;
    return -1;
}


void csv_put_field(FILE *out, const char *v)
{
    if (!v)
        return;
    if (!strpbrk(v, ",\"\r\n")) {
        fputs(v, out);
        return;
    }
    fputc('"', out);
    for (; *v; v++) {
        if (*v == '"')
            fputc('"', out);
        fputc(*v, out);
    }
    fputc('"', out);
}
