/*
 * embed.h - files built into the binary (templates, Lua, schema) by tools/embed.c.
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

/* The embedded file at 'path', or NULL. */
const rt_embedded *embed_find(const char *path);

#endif
