/*
 * sandbox.h - the Lua host the tuner's scripts run in: search spaces (space.c) and operator
 * files (opfile.c).
 *
 * A sandbox is a fresh lua_State with base, math, string and table only: dofile, loadfile,
 * load, require and collectgarbage are removed; io, os, package and debug are nil; print
 * writes to stderr (stdout belongs to the tuner's reports); setmetatable refuses __gc
 * (finalizers run with hooks off); xpcall runs its handler after the unwinding, under the
 * hook (Lua runs it where the error is raised, with hooks off when the hook raised it).
 * Library functions whose time in C no limit bounds are left out: string.find, match,
 * gmatch, gsub (patterns backtrack), pack, packsize, unpack, and table.move; string.rep,
 * table.insert, remove and sort are the sandbox's own, bounded. Chunks load as text only.
 * A count hook stops a script after SANDBOX_INSN_LIMIT VM instructions, the allocator
 * refuses to grow the state past SANDBOX_MEM_LIMIT, and a run (or a call of a returned
 * function, see sandbox_reset_count) stops after SANDBOX_TIME_LIMIT_MS of wall-clock time:
 * the hook, the allocator and the sandbox's loops look at the clock, and past the deadline
 * the hook fails at every instruction and nothing can be allocated.
 * All the work, the host's own reading of the script's tables included, runs inside
 * sandbox_run's lua_pcall, so that no Lua error escapes unprotected.
 */
#ifndef RT_SANDBOX_H
#define RT_SANDBOX_H

#include <stddef.h>
#include <lua.h>
#include "../runtime/err.h"

#define SANDBOX_INSN_LIMIT 100000000LL          /* VM instructions between count resets */
#define SANDBOX_MEM_LIMIT ((size_t)256 << 20)   /* bytes the Lua state may hold */
#define SANDBOX_MEM_LIMIT_TEXT "256 MiB"
#define SANDBOX_TIME_LIMIT_MS 10000L          /* wall-clock time per run or reset */

typedef struct sandbox sandbox;

/* A new sandbox for the script 'chunkname' (a file name, used in every message; any length:
 * Lua's cut of long names is undone). *out NULL on error. */
int sandbox_open(const char *chunkname, sandbox **out, rt_err *e);

/* Close; NULL is a harmless no-op. */
void sandbox_close(sandbox *s);

/* Run body(L) protected, with ud as a light userdata at stack index 1; the libraries are
 * opened on the first run. RT_OK, or: RT_ELUA "file:line: message" for a Lua error (syntax,
 * runtime, instruction or memory limit), the code and message given to sandbox_fail, or
 * RT_ENOMEM. The stack is left empty either way. */
int sandbox_run(sandbox *s, lua_CFunction body, void *ud, rt_err *e);

/* Inside a run: load 'text' as the script's own chunk (text only) and push it, or raise the
 * syntax error. */
void sandbox_load(lua_State *L, const char *text, size_t len);

/* Inside a run: raise an error with its own code and message (reported as it is, with
 * "chunkname: " in front when it has no position). Does not return. */
int sandbox_fail(lua_State *L, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Inside a run: start the instruction count and the clock again, for limits per call of a
 * function the script returned (an operator's sample function) rather than per run. */
void sandbox_reset_count(lua_State *L);

/* The time limit of runs that start from now on, in ms (for the tests; <= 0: the default,
 * SANDBOX_TIME_LIMIT_MS). Not for use while a run is in flight on another thread. */
void sandbox_set_time_limit(long ms);

/* "a number", "a table", "nil": the type of the value at idx, for messages. */
const char *sandbox_typename(lua_State *L, int idx);

/* Read a whole file (a space script, an operator file); *text malloc'd and NUL-terminated,
 * *len (when not NULL) its length. RT_EIO "PATH: why" when it cannot be read. */
int read_file(const char *path, char **text, size_t *len, rt_err *e);

#endif
