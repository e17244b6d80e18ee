/*
 * embed.c - the files built into the redtune program beside libredtune's templates: the Lua
 * helpers and spaces and the schema (build/gen/embed_tuner.c), which an application linking
 * libredtune does not carry.
 */
#include <string.h>
#include "../runtime/embed.h"

extern const rt_embedded tuner_embedded_files[];
extern const int tuner_embedded_count;

/* The embedded file at 'path', of libredtune or of the tuner; NULL when neither has it. This
 * takes the place of libredtune's (weak) embed_find, so that codegen finds the templates and
 * the tuner its Lua and schema through one function. */
const rt_embedded *embed_find(const char *path)
{
    for (int i = 0; i < rt_embedded_count; i++)
        if (strcmp(rt_embedded_files[i].path, path) == 0)
            return &rt_embedded_files[i];
    for (int i = 0; i < tuner_embedded_count; i++)
        if (strcmp(tuner_embedded_files[i].path, path) == 0)
            return &tuner_embedded_files[i];
    return NULL;
}
