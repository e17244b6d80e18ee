/*
 * hash.h - content hashes (SHA-256) of generated kernel sources.
 */
#ifndef RT_HASH_H
#define RT_HASH_H

#include <stddef.h>

#define RT_HASH_HEX 65   /* 64 hex digits and the NUL */

/* SHA-256 of 'len' bytes as 64 lower-case hex digits. */
void hash_hex(const void *data, size_t len, char out[RT_HASH_HEX]);

#endif
