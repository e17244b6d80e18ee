/*
 * embed.c - lookup of the files built into libredtune: the templates.
 */
#include <string.h>
#include "embed.h"

const rt_embedded *embed_find(const char *path)
{
    for (int i = 0; i < rt_embedded_count; i++)
        if (strcmp(rt_embedded_files[i].path, path) == 0)
            return &rt_embedded_files[i];
    return NULL;
}
