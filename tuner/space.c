/*
 * space.c - hosts Lua: runs a space script (lua/spaces/<name>.lua) in a sandbox and expands it
 * into configs for one device and one case.
 *
 * The sandbox is a fresh lua_State per call with base, math, string and table only: dofile,
 * loadfile, load and require are removed; io, os, package and debug are nil; print writes to
 * stderr (stdout belongs to the tuner's reports); setmetatable refuses __gc (finalizers run
 * with hooks off). Chunks load as text only. A count hook stops the scripts after INSN_LIMIT
 * VM instructions, and the allocator refuses to grow the state past MEM_LIMIT. All the work,
 * our own reading of the script's tables included, runs inside one lua_pcall (pexpand), so
 * that no Lua error escapes unprotected and the state is closed on every path.
 *
 * Order of the result: entries in the order the script lists them; within an entry, the
 * cartesian product of its parameter lists in the family's declaration order (the @param
 * lines of templates/<family>.cu), first parameter slowest, each list in the order written.
 * lua/redtune.lua computes the product (its expand function); C checks the entries before
 * and reads the flat list after. A duplicate (same family, same values) keeps its first place.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include "space.h"
#include "runtime/embed.h"

#define INSN_LIMIT 100000000LL         /* VM instructions per expansion, helpers included */
#define INSN_STEP 1000                 /* how often the count hook looks */
#define MEM_LIMIT ((size_t)256 << 20)  /* bytes the Lua state may hold */
#define MEM_LIMIT_TEXT "256 MiB"
#define MAX_CONFIGS 1000000            /* configs one expansion may give */
#define HELPERS "lua/redtune.lua"
#define DEFAULT_SPACE "lua/spaces/default.lua"
/* Stands in Lua's messages for a chunkname too long for LUA_IDSIZE, which Lua would cut. */
#define LONGNAME "\001space"

/* The allocator's and the count hook's state, reached through lua_getallocf. */
typedef struct sandbox {
    size_t used;              /* bytes held by the state */
    int over;                 /* requests refused and not rescued by Lua's retry: errors */
    const void *refused;      /* the request just refused, to recognise Lua's retry */
    size_t refused_size;      /* 0 when the last request was not refused */
    long long insns;          /* instructions run, to INSN_STEP */
    const char *source;       /* the script's chunkname as Lua knows it ("@lua/spaces/x.lua") */
} sandbox;

/* One expansion: its inputs, the growing result and an error raised from C. */
typedef struct expansion {
    const char *text;
    size_t len;
    const char *chunkname;    /* as the caller gave it, for messages */
    const char *source;       /* as given to Lua: "@" chunkname, or "@" LONGNAME */
    const rt_device *dev;
    const space_case *cs;
    rt_config *v;             /* the configs so far */
    int n, cap;
    int *slots;               /* a hash set over v for duplicates: index + 1, 0 when free */
    size_t nslots;
    rt_err err;               /* code != RT_OK when C raised the error */
    rt_err scratch;           /* for config_set */
} expansion;

/* The allocator: refuses to grow the state past MEM_LIMIT. A refusal is an error unless
 * Lua rescues it: the core collects and retries the same request at once (lauxlib's buffers
 * raise without a retry), so a refusal counts in 'over' until its retry succeeds. */
static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    sandbox *sb = ud;
    size_t old = ptr ? osize : 0;   /* with ptr NULL, osize is a type tag */
    if (nsize == 0) {
        free(ptr);
        sb->used -= old;
        return NULL;
    }
    int retry = sb->refused_size == nsize && sb->refused == ptr;
    sb->refused_size = 0;           /* only the next request can be the retry */
    if (nsize > old && nsize - old > MEM_LIMIT - sb->used) {
        sb->over++;
        if (!retry) {
            sb->refused = ptr;
            sb->refused_size = nsize;
        }
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p) {
        sb->used = sb->used - old + nsize;
        if (retry)
            sb->over--;             /* the collection made room: no error */
    }
    return p;
}

static sandbox *get_sandbox(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

/* Does the first line of 'm' carry a position ("name:12:")? */
static int has_position(const char *m)
{
    for (const char *p = m; *p && *p != '\n'; p++) {
        if (*p != ':')
            continue;
        const char *q = p + 1;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > p + 1 && *q == ':')
            return 1;
    }
    return 0;
}

/* Where to point a message: the innermost frame running the script itself, else the
 * innermost Lua frame. 0 when no Lua function is running. */
static int locate(lua_State *L, const char *source, lua_Debug *out)
{
    lua_Debug ar;
    int found = 0;
    for (int level = 0; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0)
            continue;
        if (strcmp(ar.source, source) == 0) {
            *out = ar;
            return 1;
        }
        if (!found) {
            *out = ar;
            found = 1;
        }
    }
    return found;
}

/* Stop a runaway script, and one that caught a memory error and goes on. Past a limit the
 * hook runs at every instruction, so a script that catches the error with pcall fails again
 * at its next instruction. */
static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    sandbox *sb = get_sandbox(L);
    sb->insns += INSN_STEP;
    if (sb->insns < INSN_LIMIT && !sb->over)
        return;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    const char *what = sb->over ? "memory limit exceeded (" MEM_LIMIT_TEXT ")"
                                : "instruction limit exceeded";
    lua_Debug where;
    if (locate(L, sb->source, &where))
        lua_pushfstring(L, "%s:%d: %s", where.short_src, where.currentline, what);
    else
        lua_pushstring(L, what);
    lua_error(L);
}

/* The pcall message handler: "file:line: message", no traceback. Lua's own errors carry a
 * position already; one raised without (error(x, 0), a table) gets the script's line. */
static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    lua_Debug ar;
    if (!has_position(msg) && locate(L, get_sandbox(L)->source, &ar))
        lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
    else
        lua_pushstring(L, msg);
    return 1;
}

static int panic(lua_State *L)
{
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "redtune: unprotected error in call to Lua API (%s)\n",
            msg ? msg : "error object is not a string");
    return 0;   /* Lua aborts */
}

/* setmetatable, refusing __gc: Lua runs finalizers with hooks off, out of the count hook's
 * reach (and at lua_close). The rest is lbaselib.c's. */
static int sandbox_setmetatable(lua_State *L)
{
    int t = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    if (t == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)               /* stack: t mt gc */
            return luaL_error(L, "__gc metamethods are not allowed in a space script");
        lua_pop(L, 1);
    }
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/* print, to stderr. */
static int sandbox_print(lua_State *L)
{
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *s = luaL_tolstring(L, i, &len);
        if (i > 1)
            fputc('\t', stderr);
        fwrite(s, 1, len, stderr);
        lua_pop(L, 1);
    }
    fputc('\n', stderr);
    fflush(stderr);
    return 0;
}

static void open_sandbox(lua_State *L)
{
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},
        {LUA_MATHLIBNAME, luaopen_math},
        {LUA_STRLIBNAME, luaopen_string},
        {LUA_TABLIBNAME, luaopen_table},
        {NULL, NULL},
    };
    static const char *const removed[] = {
        "dofile", "loadfile", "load", "require", "io", "os", "package", "debug", NULL,
    };
    for (const luaL_Reg *lib = libs; lib->name; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);   /* stack: lib */
        lua_pop(L, 1);
    }
    for (const char *const *name = removed; *name; name++) {
        lua_pushnil(L);
        lua_setglobal(L, *name);
    }
    lua_pushcfunction(L, sandbox_print);
    lua_setglobal(L, "print");
    lua_pushcfunction(L, sandbox_setmetatable);
    lua_setglobal(L, "setmetatable");
}

/* Raise an error from C with its own code; the message goes to x->err, not through Lua. */
__attribute__((format(printf, 4, 5)))
static int fail(lua_State *L, expansion *x, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err.msg, sizeof x->err.msg, fmt, ap);
    va_end(ap);
    x->err.code = code;
    lua_pushstring(L, x->err.msg);
    return lua_error(L);
}

/* "a number", "a table", "nil": the type of a value, for messages. */
static const char *a_type(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TNIL: return "nil";
    case LUA_TBOOLEAN: return "a boolean";
    case LUA_TNUMBER: return "a number";
    case LUA_TSTRING: return "a string";
    case LUA_TTABLE: return "a table";
    case LUA_TFUNCTION: return "a function";
    case LUA_TTHREAD: return "a thread";
    default: return "a userdata";
    }
}

static int param_index(const rt_family *f, const char *name)
{
    for (int i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i].name, name) == 0)
            return i;
    return -1;
}

/* "B V U G": the family's parameters, in declaration order. */
static void param_list(const rt_family *f, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < f->nparams && used < size; i++)
        used += snprintf(buf + used, size - used, "%s%s", i ? " " : "", f->params[i].name);
}

/* "tree_interleaved tree_sequential gridstride": the known families. */
static void family_list(char *buf, size_t size)
{
    size_t used = 0;
    int n = family_count();
    buf[0] = '\0';
    for (int i = 0; i < n && used < size; i++)
        used += snprintf(buf + used, size - used, "%s%s", i ? " " : "", family_at(i)->name);
    if (n == 0)
        snprintf(buf, size, "none: %s", family_error() ? family_error() : "no templates");
}

/* The key at 'idx' names no parameter of f. */
static int no_param(lua_State *L, expansion *x, const rt_family *f, int idx)
{
    char params[RT_MAX_PARAMS * RT_NAME_MAX];
    param_list(f, params, sizeof params);
    const char *key = luaL_tolstring(L, idx, NULL);
    return fail(L, x, RT_EINVAL, "%s: family '%s' has no parameter '%s' (parameters: %s)",
                x->chunkname, f->name, key, params);
}

/* The value at 'idx' as a parameter value: an integer, or a float with an integral value. */
static long long check_integer(lua_State *L, expansion *x, const rt_family *f,
                               const char *name, int idx)
{
    int isint = 0;
    lua_Integer v = 0;
    if (lua_type(L, idx) == LUA_TNUMBER)
        v = lua_tointegerx(L, idx, &isint);
    if (!isint) {
        const char *what = lua_type(L, idx) == LUA_TNUMBER ? luaL_tolstring(L, idx, NULL)
                                                           : a_type(L, idx);
        fail(L, x, RT_EINVAL, "%s: family '%s' parameter '%s' must be an integer, not %s",
             x->chunkname, f->name, name, what);
    }
    return v;
}

/* An entry's params table at 'idx': parameter name -> integer or list of integers. */
static void check_params(lua_State *L, expansion *x, const rt_family *f, int idx)
{
    if (!lua_istable(L, idx))
        fail(L, x, RT_EINVAL, "%s: family '%s': params must be a table, not %s",
             x->chunkname, f->name, a_type(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) {                      /* stack: params key value */
        if (lua_type(L, -2) != LUA_TSTRING || param_index(f, lua_tostring(L, -2)) < 0)
            no_param(L, x, f, -2);
        const char *name = lua_tostring(L, -2);
        if (lua_istable(L, -1)) {
            lua_Integer len = luaL_len(L, -1);
            for (lua_Integer j = 1; j <= len; j++) {
                lua_geti(L, -1, j);                 /* stack: params key list item */
                check_integer(L, x, f, name, -1);
                lua_pop(L, 1);
            }
        } else {
            check_integer(L, x, f, name, -1);
        }
        lua_pop(L, 1);                              /* stack: params key */
    }
}

/* Entry i of the space, at 'idx': { family =, params =, derive =, constraint = }. */
static const rt_family *check_entry(lua_State *L, expansion *x, int idx, int i)
{
    if (!lua_istable(L, idx))
        fail(L, x, RT_EINVAL, "%s: entry %d of the space is %s, not a table", x->chunkname, i,
             a_type(L, idx));
    lua_getfield(L, idx, "family");                 /* stack: entry name */
    if (lua_type(L, -1) != LUA_TSTRING)
        fail(L, x, RT_EINVAL, "%s: entry %d of the space has no family name (family = %s)",
             x->chunkname, i, a_type(L, -1));
    const rt_family *f = family_find(lua_tostring(L, -1));
    if (!f) {
        char known[4096];
        family_list(known, sizeof known);
        fail(L, x, RT_EINVAL, "%s: unknown family '%s' (known: %s)", x->chunkname,
             lua_tostring(L, -1), known);
    }
    lua_pop(L, 1);                                  /* stack: entry */
    lua_pushnil(L);
    while (lua_next(L, idx)) {                      /* stack: entry key value */
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        if (k && (strcmp(k, "derive") == 0 || strcmp(k, "constraint") == 0)) {
            if (!lua_isfunction(L, -1))
                fail(L, x, RT_EINVAL, "%s: family '%s': %s must be a function, not %s",
                     x->chunkname, f->name, k, a_type(L, -1));
        } else if (k && strcmp(k, "params") == 0) {
            check_params(L, x, f, lua_gettop(L));
        } else if (!k || strcmp(k, "family") != 0) {
            fail(L, x, RT_EINVAL,
                 "%s: family '%s': unknown field '%s' (fields: family params derive constraint)",
                 x->chunkname, f->name, luaL_tolstring(L, -2, NULL));
        }
        lua_pop(L, 1);                              /* stack: entry key */
    }
    return f;
}

static uint64_t config_hash(const rt_config *c)
{
    uint64_t h = (uint64_t)(uintptr_t)c->family;
    for (int i = 0; i < c->family->nparams; i++) {
        h = (h ^ (uint64_t)c->values[i]) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 31;
    }
    return h;
}

static int same_config(const rt_config *a, const rt_config *b)
{
    return a->family == b->family &&
           memcmp(a->values, b->values, (size_t)a->family->nparams * sizeof a->values[0]) == 0;
}

/* Where c is in the hash set, or the free slot where it goes. */
static size_t find_slot(const expansion *x, const rt_config *c)
{
    size_t mask = x->nslots - 1, i = config_hash(c) & mask;
    while (x->slots[i] && !same_config(&x->v[x->slots[i] - 1], c))
        i = (i + 1) & mask;
    return i;
}

/* Append c unless it is there already. */
static void add_config(lua_State *L, expansion *x, const rt_config *c)
{
    if ((size_t)x->n * 2 >= x->nslots) {            /* keep the set at most half full */
        size_t nslots = x->nslots ? x->nslots * 2 : 256;
        int *slots = calloc(nslots, sizeof *slots);
        if (!slots)
            fail(L, x, RT_ENOMEM, "%s: out of memory for %d configs", x->chunkname, x->n);
        free(x->slots);
        x->slots = slots;
        x->nslots = nslots;
        for (int i = 0; i < x->n; i++)
            x->slots[find_slot(x, &x->v[i])] = i + 1;
    }
    size_t slot = find_slot(x, c);
    if (x->slots[slot])
        return;
    if (x->n == MAX_CONFIGS)
        fail(L, x, RT_EINVAL, "%s: the space has more than %d configs", x->chunkname,
             MAX_CONFIGS);
    if (x->n == x->cap) {
        int cap = x->cap ? x->cap * 2 : 64;
        rt_config *v = realloc(x->v, (size_t)cap * sizeof *v);
        if (!v)
            fail(L, x, RT_ENOMEM, "%s: out of memory for %d configs", x->chunkname, x->n);
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n++] = *c;
    x->slots[slot] = x->n;
}

/* The point at 'idx' (a table parameter name -> integer, after derive) as a config. */
static void read_config(lua_State *L, expansion *x, const rt_family *f, int idx)
{
    rt_config c;
    if (!lua_istable(L, idx))
        fail(L, x, RT_ELUA, "%s: expand gave %s, not a table", HELPERS, a_type(L, idx));
    config_default(f, &c);
    for (int i = 0; i < f->nparams; i++) {
        const char *name = f->params[i].name;
        if (lua_getfield(L, idx, name) != LUA_TNIL) {   /* stack: point value */
            long long v = check_integer(L, x, f, name, -1);
            if (config_set(&c, name, v, &x->scratch) != RT_OK)
                fail(L, x, x->scratch.code, "%s: %s", x->chunkname, x->scratch.msg);
        }
        lua_pop(L, 1);
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {                      /* stack: point key value */
        if (lua_type(L, -2) != LUA_TSTRING || param_index(f, lua_tostring(L, -2)) < 0)
            no_param(L, x, f, -2);                  /* derive set a stranger */
        lua_pop(L, 1);
    }
    add_config(L, x, &c);
}

/* Expand entry 'idx' of family f through redtune.lua's expand (at stack index 2) and add
 * its configs. */
static void expand_entry(lua_State *L, expansion *x, const rt_family *f, int idx)
{
    lua_pushvalue(L, 2);                            /* stack: expand */
    lua_pushvalue(L, idx);                          /* stack: expand entry */
    lua_createtable(L, f->nparams, 0);              /* stack: expand entry names */
    lua_createtable(L, f->nparams, 0);              /* stack: expand entry names defaults */
    for (int i = 0; i < f->nparams; i++) {
        lua_pushstring(L, f->params[i].name);
        lua_seti(L, -3, i + 1);
        lua_pushinteger(L, f->params[i].def);
        lua_seti(L, -2, i + 1);
    }
    lua_pushvalue(L, 3);                            /* stack: expand entry names defaults dev */
    lua_pushvalue(L, 4);                            /* stack: ... dev case */
    lua_call(L, 5, 2);                              /* stack: list bad */
    if (lua_isnil(L, -2)) {
        /* The constraint returned something other than a boolean: point at its definition. */
        const char *got = lua_tostring(L, -1);
        lua_Debug ar;
        lua_getfield(L, idx, "constraint");         /* stack: nil bad constraint */
        if (lua_isfunction(L, -1) && lua_getinfo(L, ">S", &ar) && ar.linedefined > 0)
            fail(L, x, RT_ELUA, "%s:%d: the constraint of family '%s' returned %s, "
                 "not true or false", ar.short_src, ar.linedefined, f->name, got);
        fail(L, x, RT_ELUA, "%s: the constraint of family '%s' returned %s, not true or false",
             x->chunkname, f->name, got);
    }
    lua_pop(L, 1);                                  /* stack: list */
    int list = lua_gettop(L);
    lua_Integer n = luaL_len(L, list);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, list, i);                       /* stack: list point */
        read_config(L, x, f, list + 1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

static void push_device(lua_State *L, const rt_device *d)
{
    lua_createtable(L, 0, 24);
#define INT_FIELD(field) (lua_pushinteger(L, d->field), lua_setfield(L, -2, #field))
    INT_FIELD(ordinal);
    INT_FIELD(cc_major);
    INT_FIELD(cc_minor);
    INT_FIELD(sm_count);
    INT_FIELD(warp_size);
    INT_FIELD(max_threads_per_block);
    INT_FIELD(max_threads_per_sm);
    INT_FIELD(max_blocks_per_sm);
    INT_FIELD(smem_per_block);
    INT_FIELD(smem_per_block_optin);
    INT_FIELD(smem_per_sm);
    INT_FIELD(regs_per_block);
    INT_FIELD(regs_per_sm);
    INT_FIELD(l2_bytes);
    INT_FIELD(mem_clock_khz);
    INT_FIELD(bus_width_bits);
    INT_FIELD(driver_version);
    INT_FIELD(total_mem);
#undef INT_FIELD
    lua_pushlstring(L, d->name, strnlen(d->name, sizeof d->name));
    lua_setfield(L, -2, "name");
    lua_pushlstring(L, d->uuid, strnlen(d->uuid, sizeof d->uuid));
    lua_setfield(L, -2, "uuid");
    lua_pushinteger(L, 10 * d->cc_major + d->cc_minor);
    lua_setfield(L, -2, "cc");
    lua_pushinteger(L, d->max_threads_per_block);
    lua_setfield(L, -2, "max_threads");
}

static void push_case(lua_State *L, const space_case *cs)
{
    lua_createtable(L, 0, 4);
    if (cs->op) {
        lua_pushstring(L, cs->op);
        lua_setfield(L, -2, "op");
    }
    if (cs->type) {
        lua_pushstring(L, cs->type);
        lua_setfield(L, -2, "type");
    }
    lua_pushinteger(L, cs->type_size);
    lua_setfield(L, -2, "type_size");
    lua_pushboolean(L, cs->commutative);
    lua_setfield(L, -2, "commutative");
    lua_pushstring(L, cs->layout ? cs->layout : "flat");
    lua_setfield(L, -2, "layout");
}

/* The family can run the case's layout: unsegmented families the flat one, segmented ones
 * the layouts their @layout line names. */
static int layout_fits(const rt_family *f, const char *layout)
{
    if (!layout || !strcmp(layout, "flat"))
        return f->plan != PLAN_SEGMENTED;
    int bit = !strcmp(layout, "keys") ? FAMILY_LAYOUT_KEYS
            : !strcmp(layout, "offsets") ? FAMILY_LAYOUT_OFFSETS : 0;
    return f->plan == PLAN_SEGMENTED && (f->layouts & bit);
}

/* The protected body of space_expand. Stack on entry: the expansion (a light userdata). */
static int pexpand(lua_State *L)
{
    expansion *x = lua_touserdata(L, 1);
    open_sandbox(L);

    const rt_embedded *h = embed_find(HELPERS);
    if (!h)
        return fail(L, x, RT_ENOTFOUND, "%s: %s is not built in", x->chunkname, HELPERS);
    if (luaL_loadbufferx(L, h->text, h->len, "@" HELPERS, "t") != LUA_OK)
        return lua_error(L);
    lua_call(L, 0, 2);                              /* stack: x redtune expand */
    if (!lua_istable(L, 2) || !lua_isfunction(L, 3))
        return fail(L, x, RT_ELUA, "%s: must return the helpers and expand", HELPERS);
    lua_pushvalue(L, 2);
    lua_setglobal(L, "redtune");
    lua_remove(L, 2);                               /* stack: x expand */
    push_device(L, x->dev);                         /* stack: x expand dev */
    push_case(L, x->cs);                            /* stack: x expand dev case */
    lua_pushvalue(L, 3);
    lua_setglobal(L, "dev");
    lua_pushvalue(L, 4);
    lua_setglobal(L, "case");

    if (luaL_loadbufferx(L, x->text, x->len, x->source, "t") != LUA_OK)
        return lua_error(L);
    lua_call(L, 0, 1);                              /* stack: x expand dev case space */

    /* Check every entry before expanding any, so that a bad one fails whatever the case. */
    if (!lua_istable(L, 5))
        return fail(L, x, RT_EINVAL, "%s: the script must return a list of family entries, "
                    "not %s", x->chunkname, a_type(L, 5));
    lua_Integer n = luaL_len(L, 5);
    lua_pushnil(L);
    while (lua_next(L, 5)) {                        /* stack: ... space key value */
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n)
            return fail(L, x, RT_EINVAL, "%s: the script must return a list of family "
                        "entries; it has the key '%s'", x->chunkname,
                        luaL_tolstring(L, -1, NULL));
    }
    if (n > MAX_CONFIGS)
        return fail(L, x, RT_EINVAL, "%s: the space has more than %d entries", x->chunkname,
                    MAX_CONFIGS);
    const rt_family **fam = lua_newuserdatauv(L, (size_t)n * sizeof *fam + 1, 0);
    for (lua_Integer i = 1; i <= n; i++) {          /* stack: ... space fam */
        lua_geti(L, 5, i);                          /* stack: ... space fam entry */
        fam[i - 1] = check_entry(L, x, 7, (int)i);
        lua_pop(L, 1);
    }
    for (lua_Integer i = 1; i <= n; i++) {
        if ((fam[i - 1]->needs_commutative && !x->cs->commutative)
            || !layout_fits(fam[i - 1], x->cs->layout))
            continue;
        lua_geti(L, 5, i);                          /* stack: ... space fam entry */
        expand_entry(L, x, fam[i - 1], 7);
        lua_pop(L, 1);
    }
    return 0;
}

/* Record a failure: LONGNAME back to the chunkname, and "chunkname: " in front of a message
 * with no position. */
static int report(rt_err *e, int code, const char *chunkname, const char *msg)
{
    char buf[RT_ERRMSG_MAX];
    size_t used = 0, skip = strlen(LONGNAME);
    if (!has_position(msg) && strncmp(msg, chunkname, strlen(chunkname)) != 0)
        used = (size_t)snprintf(buf, sizeof buf, "%s: ", chunkname);
    for (const char *p = msg; *p && used + 1 < sizeof buf; ) {
        if (strncmp(p, LONGNAME, skip) == 0) {
            used += (size_t)snprintf(buf + used, sizeof buf - used, "%s", chunkname);
            p += skip;
        } else {
            buf[used++] = *p++;
        }
    }
    buf[used < sizeof buf ? used : sizeof buf - 1] = '\0';
    return rt_seterr(e, code, "%s", buf);
}

int space_expand(const char *text, size_t len, const char *chunkname, const rt_device *dev,
                 const space_case *cs, rt_config **configs, int *count, rt_err *e)
{
    int rc = RT_OK;
    expansion *x = NULL;
    lua_State *L = NULL;
    char *source = NULL;
    sandbox sb = {0};

    if (configs)
        *configs = NULL;
    if (count)
        *count = 0;
    if (!text || !chunkname || !dev || !cs || !configs || !count)
        return rt_seterr(e, RT_EINVAL, "space_expand: a NULL argument");

    x = calloc(1, sizeof *x);
    source = malloc(strlen(chunkname) + 2);
    if (!x || !source) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", chunkname);
        goto done;
    }
    /* Lua cuts a long chunkname in its messages; report() puts the whole one back. */
    if (strlen(chunkname) + 1 < LUA_IDSIZE)
        sprintf(source, "@%s", chunkname);
    else
        strcpy(source, "@" LONGNAME);
    x->text = text;
    x->len = len;
    x->chunkname = chunkname;
    x->source = source;
    x->dev = dev;
    x->cs = cs;
    sb.source = source;

    L = lua_newstate(sandbox_alloc, &sb);
    if (!L) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: cannot create a Lua state", chunkname);
        goto done;
    }
    lua_atpanic(L, panic);
    lua_sethook(L, count_hook, LUA_MASKCOUNT, INSN_STEP);
    lua_pushcfunction(L, msghandler);               /* stack: msgh */
    lua_pushcfunction(L, pexpand);                  /* stack: msgh pexpand */
    lua_pushlightuserdata(L, x);                    /* stack: msgh pexpand x */
    int status = lua_pcall(L, 1, 0, 1);             /* stack: msgh [error] */
    if (status == LUA_OK && sb.over) {             /* caught, and no hook ran since */
        rc = rt_seterr(e, RT_ELUA, "%s: memory limit exceeded (" MEM_LIMIT_TEXT ")", chunkname);
    } else if (status == LUA_OK) {
        *configs = x->v;
        *count = x->n;
        x->v = NULL;
    } else if (x->err.code != RT_OK) {
        rc = report(e, x->err.code, chunkname, x->err.msg);
    } else if (status == LUA_ERRMEM && sb.over) {
        rc = rt_seterr(e, RT_ELUA, "%s: memory limit exceeded (" MEM_LIMIT_TEXT ")", chunkname);
    } else if (status == LUA_ERRMEM) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: not enough memory", chunkname);
    } else {
        const char *msg = lua_tostring(L, -1);
        rc = report(e, RT_ELUA, chunkname, msg ? msg : "(error object is not a string)");
    }

done:
    if (L)
        lua_close(L);
    if (x) {
        free(x->v);
        free(x->slots);
    }
    free(x);
    free(source);
    return rc;
}

const char *space_default_text(void)
{
    const rt_embedded *d = embed_find(DEFAULT_SPACE);
    return d ? d->text : NULL;
}
