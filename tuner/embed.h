/*
 * embed.h - the files built into the redtune program beside libredtune's templates: the Lua
 * helpers and spaces and the schema (build/gen/embed_tuner.c).
 */
#ifndef RT_TUNER_EMBED_H
#define RT_TUNER_EMBED_H

#include "../runtime/embed.h"

/* The embedded file at 'path', of the tuner or of libredtune; NULL when neither has it. */
const rt_embedded *embed_find_tuner(const char *path);

#endif
