/*
 * space.h - Lua search spaces. A space script (lua/spaces/NAME.lua) is run in a sandbox and
 * expanded into configs for one device and one case (op, type).
 */
#ifndef RT_SPACE_H
#define RT_SPACE_H

#include "../runtime/err.h"
#include "../runtime/device.h"
#include "../runtime/family.h"

typedef struct space_case {
    const char *op;          /* "min" */
    const char *type;        /* "f32" */
    int type_size;           /* bytes per element */
    int commutative;         /* the operator commutes */
    char *skipped;           /* NULL, or a buffer that receives the names of the families
                              * left out for want of a commutative operator ("a b") */
    size_t skipped_len;
    const char *layout;      /* "flat" (NULL), "keys", "offsets" or "axis": families that
                              * cannot run it are left out (flat and segmented cases never
                              * get @plan axis families, axis cases only those) */
    unsigned long long outer, len, inner;   /* layout "axis": the shape (case.outer, case.len,
                                             * case.inner and case.n = their product) */
} space_case;

/* The largest space script run, in bytes. */
#define SPACE_MAX_BYTES (1 << 20)

/*
 * Run the space script 'text' (named 'chunkname' in messages, e.g. "lua/spaces/default.lua")
 * and expand it for 'dev' and 'cs'. On success *configs is a malloc'd array of *count configs
 * (caller frees); a family that needs a commutative operator is left out when cs->commutative
 * is 0 (and named in cs->skipped), and so is one that cannot run cs->layout (Lua sees it as
 * case.layout). Errors are RT_ELUA with "file:line: message" (syntax, runtime error,
 * instruction limit, forbidden library) or RT_EINVAL for an unknown family or parameter
 * (naming the file) or a script over SPACE_MAX_BYTES. The script runs in the sandbox of
 * sandbox.h; no GPU is needed (a device from device_for_arch will do): the entry point for
 * fuzzing space scripts.
 */
int space_expand(const char *text, size_t len, const char *chunkname, const rt_device *dev,
                 const space_case *cs, rt_config **configs, int *count, rt_err *e);

/* The embedded default space (lua/spaces/default.lua) and helpers (lua/redtune.lua). */
const char *space_default_text(void);

/* The embedded default space for a layout: default.lua (flat), segmented.lua or axis.lua,
 * with its name for messages. */
const char *space_for_layout(int layout, const char **name);

/* Force the layout parameters of a segmented config (LAYOUT, OFF64). */
void config_force_layout(rt_config *c, int layout, int off64);

/* A plausible device for an architecture with no GPU at hand ("sm_90" -> H100-like), for
 * expanding spaces in `redtune compile --arch`. RT_EINVAL for a malformed arch. */
int device_for_arch(const char *arch, rt_device *d, rt_err *e);

#endif
