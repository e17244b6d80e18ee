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

/* The template at 'path' built into libredtune, or NULL. The redtune program finds its own
 * files (Lua, schema) with tuner/embed.h's embed_find_tuner. */
const rt_embedded *embed_find(const char *path);

#endif
