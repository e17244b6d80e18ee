/*
 * embed.h - files built into the binary by tools/embed.c: libredtune carries the templates
 * (rt_embedded_files); the redtune program adds the Lua helpers and spaces and the schema
 * (tuner/embed.c).
 */
#ifndef RT_EMBED_H
#define RT_EMBED_H

#include <stddef.h>

typedef struct rt_embedded {
    const char *path;     /* "templates/gridstride.cu" */
    const char *text;     /* NUL-terminated */
    size_t len;
} rt_embedded;

extern const rt_embedded rt_embedded_files[];
extern const int rt_embedded_count;

/* The embedded file at 'path', or NULL. libredtune's looks among the templates; the redtune
 * program's (tuner/embed.c) takes its place and looks among its own files too. */
const rt_embedded *embed_find(const char *path);

#endif
