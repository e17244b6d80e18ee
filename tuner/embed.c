/*
 * embed.c - the files built into the redtune program beside libredtune's templates: the Lua
 * helpers and spaces and the schema (build/gen/embed_tuner.c), which an application linking
 * libredtune does not carry.
 */
#include <string.h>
#include "embed.h"

extern const rt_embedded tuner_embedded_files[];
extern const int tuner_embedded_count;

const rt_embedded *embed_find_tuner(const char *path)
{
    const rt_embedded *f = embed_find(path);

    if (f)
        return f;
    for (int i = 0; i < tuner_embedded_count; i++)
        if (strcmp(tuner_embedded_files[i].path, path) == 0)
            return &tuner_embedded_files[i];
    return NULL;
}
