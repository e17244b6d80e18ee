/*
 * space.c - runs a space script (lua/spaces/<name>.lua) in the sandbox (sandbox.h) and
 * expands it into configs for one device and one case.
 *
 * Order of the result: entries in the order the script lists them; within an entry, the
 * cartesian product of its parameter lists in the family's declaration order (the @param
 * lines of templates/<family>.cu), first parameter slowest, each list in the order written.
 * lua/redtune.lua computes the product (its expand function); C checks the entries before
 * and reads the flat list after. A duplicate (same family, same values) keeps its first place.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "sandbox.h"
#include "segdata.h"
#include "space.h"
#include "embed.h"

#define MAX_CONFIGS 1000000            /* configs one expansion may give */
#define HELPERS "lua/redtune.lua"
#define DEFAULT_SPACE "lua/spaces/default.lua"

/* One expansion: its inputs, the growing result and an error raised from C. */
typedef struct expansion {
    const char *text;
    size_t len;
    const char *chunkname;    /* as the caller gave it, for messages */
    const rt_device *dev;
    const space_case *cs;
    rt_config *v;             /* the configs so far */
    int n, cap;
    int *slots;               /* a hash set over v for duplicates: index + 1, 0 when free */
    size_t nslots;
    rt_err scratch;           /* for config_set */
} expansion;

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
    return sandbox_fail(L, RT_EINVAL, "%s: family '%s' has no parameter '%s' (parameters: %s)",
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
                                                           : sandbox_typename(L, idx);
        sandbox_fail(L, RT_EINVAL, "%s: family '%s' parameter '%s' must be an integer, not %s",
                     x->chunkname, f->name, name, what);
    }
    return v;
}

/* An entry's params table at 'idx': parameter name -> integer or list of integers. */
static void check_params(lua_State *L, expansion *x, const rt_family *f, int idx)
{
    if (!lua_istable(L, idx))
        sandbox_fail(L, RT_EINVAL, "%s: family '%s': params must be a table, not %s",
                     x->chunkname, f->name, sandbox_typename(L, idx));
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
        sandbox_fail(L, RT_EINVAL, "%s: entry %d of the space is %s, not a table", x->chunkname, i,
                     sandbox_typename(L, idx));
    lua_getfield(L, idx, "family");                 /* stack: entry name */
    if (lua_type(L, -1) != LUA_TSTRING)
        sandbox_fail(L, RT_EINVAL, "%s: entry %d of the space has no family name (family = %s)",
                     x->chunkname, i, sandbox_typename(L, -1));
    const rt_family *f = family_find(lua_tostring(L, -1));
    if (!f) {
        char known[4096];
        family_list(known, sizeof known);
        sandbox_fail(L, RT_EINVAL, "%s: unknown family '%s' (known: %s)", x->chunkname,
                     lua_tostring(L, -1), known);
    }
    lua_pop(L, 1);                                  /* stack: entry */
    lua_pushnil(L);
    while (lua_next(L, idx)) {                      /* stack: entry key value */
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        if (k && (strcmp(k, "derive") == 0 || strcmp(k, "constraint") == 0)) {
            if (!lua_isfunction(L, -1))
                sandbox_fail(L, RT_EINVAL, "%s: family '%s': %s must be a function, not %s",
                             x->chunkname, f->name, k, sandbox_typename(L, -1));
        } else if (k && strcmp(k, "params") == 0) {
            check_params(L, x, f, lua_gettop(L));
        } else if (!k || strcmp(k, "family") != 0) {
            sandbox_fail(L, RT_EINVAL, "%s: family '%s': unknown field '%s' "
                         "(fields: family params derive constraint)",
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
            sandbox_fail(L, RT_ENOMEM, "%s: out of memory for %d configs", x->chunkname, x->n);
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
        sandbox_fail(L, RT_EINVAL, "%s: the space has more than %d configs", x->chunkname,
                     MAX_CONFIGS);
    if (x->n == x->cap) {
        int cap = x->cap ? x->cap * 2 : 64;
        rt_config *v = realloc(x->v, (size_t)cap * sizeof *v);
        if (!v)
            sandbox_fail(L, RT_ENOMEM, "%s: out of memory for %d configs", x->chunkname, x->n);
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
        sandbox_fail(L, RT_ELUA, "%s: expand gave %s, not a table", HELPERS,
                     sandbox_typename(L, idx));
    config_default(f, &c);
    for (int i = 0; i < f->nparams; i++) {
        const char *name = f->params[i].name;
        if (lua_getfield(L, idx, name) != LUA_TNIL) {   /* stack: point value */
            long long v = check_integer(L, x, f, name, -1);
            if (config_set(&c, name, v, &x->scratch) != RT_OK)
                sandbox_fail(L, x->scratch.code, "%s: %s", x->chunkname, x->scratch.msg);
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
            sandbox_fail(L, RT_ELUA, "%s:%d: the constraint of family '%s' returned %s, "
                         "not true or false", ar.short_src, ar.linedefined, f->name, got);
        sandbox_fail(L, RT_ELUA, "%s: the constraint of family '%s' returned %s, not true or false",
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
    if (cs->layout && !strcmp(cs->layout, "axis")) {
        lua_pushinteger(L, (lua_Integer)cs->outer);
        lua_setfield(L, -2, "outer");
        lua_pushinteger(L, (lua_Integer)cs->len);
        lua_setfield(L, -2, "len");
        lua_pushinteger(L, (lua_Integer)cs->inner);
        lua_setfield(L, -2, "inner");
        lua_pushinteger(L, (lua_Integer)(cs->outer * cs->len * cs->inner));
        lua_setfield(L, -2, "n");
    }
}

/* The family can run the case's layout: unsegmented families the flat one, segmented ones
 * the layouts their @layout line names, axis families (@plan axis) the axis layout alone. */
static int layout_fits(const rt_family *f, const char *layout)
{
    if (!layout || !strcmp(layout, "flat"))
        return f->plan != PLAN_SEGMENTED && f->plan != PLAN_AXIS;
    if (!strcmp(layout, "axis"))
        return f->plan == PLAN_AXIS;
    int bit = !strcmp(layout, "keys") ? FAMILY_LAYOUT_KEYS
            : !strcmp(layout, "offsets") ? FAMILY_LAYOUT_OFFSETS : 0;
    return f->plan == PLAN_SEGMENTED && (f->layouts & bit);
}

/* Add 'name' to the case's list of families left out, once. */
static void note_skipped(const space_case *cs, const char *name)
{
    if (!cs->skipped || cs->skipped_len == 0)
        return;
    size_t len = strlen(name), used = strlen(cs->skipped);
    for (const char *p = cs->skipped; (p = strstr(p, name)) != NULL; p += len)
        if ((p == cs->skipped || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return;
    snprintf(cs->skipped + used, cs->skipped_len - used, "%s%s", used ? " " : "", name);
}

/* The protected body of space_expand. Stack on entry: the expansion (a light userdata). */
static int pexpand(lua_State *L)
{
    expansion *x = lua_touserdata(L, 1);

    const rt_embedded *h = embed_find_tuner(HELPERS);
    if (!h)
        return sandbox_fail(L, RT_ENOTFOUND, "%s: %s is not built in", x->chunkname, HELPERS);
    if (luaL_loadbufferx(L, h->text, h->len, "@" HELPERS, "t") != LUA_OK)
        return lua_error(L);
    lua_call(L, 0, 2);                              /* stack: x redtune expand */
    if (!lua_istable(L, 2) || !lua_isfunction(L, 3))
        return sandbox_fail(L, RT_ELUA, "%s: must return the helpers and expand", HELPERS);
    lua_pushvalue(L, 2);
    lua_setglobal(L, "redtune");
    lua_remove(L, 2);                               /* stack: x expand */
    push_device(L, x->dev);                         /* stack: x expand dev */
    push_case(L, x->cs);                            /* stack: x expand dev case */
    lua_pushvalue(L, 3);
    lua_setglobal(L, "dev");
    lua_pushvalue(L, 4);
    lua_setglobal(L, "case");

    sandbox_load(L, x->text, x->len);
    lua_call(L, 0, 1);                              /* stack: x expand dev case space */

    /* Check every entry before expanding any, so that a bad one fails whatever the case. */
    if (!lua_istable(L, 5))
        return sandbox_fail(L, RT_EINVAL, "%s: the script must return a list of family entries, "
                            "not %s", x->chunkname, sandbox_typename(L, 5));
    lua_Integer n = luaL_len(L, 5);
    lua_pushnil(L);
    while (lua_next(L, 5)) {                        /* stack: ... space key value */
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n)
            return sandbox_fail(L, RT_EINVAL, "%s: the script must return a list of family "
                                "entries; it has the key '%s'", x->chunkname,
                                luaL_tolstring(L, -1, NULL));
    }
    if (n > MAX_CONFIGS)
        return sandbox_fail(L, RT_EINVAL, "%s: the space has more than %d entries", x->chunkname,
                            MAX_CONFIGS);
    const rt_family **fam = lua_newuserdatauv(L, (size_t)n * sizeof *fam + 1, 0);
    for (lua_Integer i = 1; i <= n; i++) {          /* stack: ... space fam */
        lua_geti(L, 5, i);                          /* stack: ... space fam entry */
        fam[i - 1] = check_entry(L, x, 7, (int)i);
        lua_pop(L, 1);
    }
    for (lua_Integer i = 1; i <= n; i++) {
        if (!layout_fits(fam[i - 1], x->cs->layout))
            continue;
        if (fam[i - 1]->needs_commutative && !x->cs->commutative) {
            note_skipped(x->cs, fam[i - 1]->name);
            continue;
        }
        lua_geti(L, 5, i);                          /* stack: ... space fam entry */
        expand_entry(L, x, fam[i - 1], 7);
        lua_pop(L, 1);
    }
    return 0;
}

int space_expand(const char *text, size_t len, const char *chunkname, const rt_device *dev,
                 const space_case *cs, rt_config **configs, int *count, rt_err *e)
{
    int rc = RT_OK;
    expansion *x = NULL;
    sandbox *sb = NULL;

    if (configs)
        *configs = NULL;
    if (count)
        *count = 0;
    if (!text || !chunkname || !dev || !cs || !configs || !count)
        return rt_seterr(e, RT_EINVAL, "space_expand: a NULL argument");
    if (len > SPACE_MAX_BYTES)
        return rt_seterr(e, RT_EINVAL, "%s: the space script is %zu bytes long; at most %d "
                         "(1 MiB)", chunkname, len, SPACE_MAX_BYTES);
    if (cs->skipped)
        cs->skipped[0] = '\0';

    x = calloc(1, sizeof *x);
    if (!x)
        return rt_seterr(e, RT_ENOMEM, "%s: out of memory", chunkname);
    x->text = text;
    x->len = len;
    x->chunkname = chunkname;
    x->dev = dev;
    x->cs = cs;
    if ((rc = sandbox_open(chunkname, &sb, e)) == RT_OK &&
        (rc = sandbox_run(sb, pexpand, x, e)) == RT_OK) {
        *configs = x->v;
        *count = x->n;
        x->v = NULL;
    }
    sandbox_close(sb);
    free(x->v);
    free(x->slots);
    free(x);
    return rc;
}

const char *space_default_text(void)
{
    const rt_embedded *d = embed_find_tuner(DEFAULT_SPACE);
    return d ? d->text : NULL;
}

const char *space_for_layout(int layout, const char **name)
{
    *name = layout == SEG_LAYOUT_FLAT ? "lua/spaces/default.lua"
          : layout == SEG_LAYOUT_AXIS ? "lua/spaces/axis.lua" : "lua/spaces/segmented.lua";
    const rt_embedded *d = embed_find_tuner(*name);
    return d ? d->text : "";
}

void config_force_layout(rt_config *c, int layout, int off64)
{
    rt_err e;
    if (c->family->plan != PLAN_SEGMENTED)
        return;
    config_set(c, "LAYOUT", layout, &e);   /* families without the parameter ignore it */
    config_set(c, "OFF64", off64, &e);
}

int device_for_arch(const char *arch, rt_device *d, rt_err *e)
{
    int major, minor;
    char extra;
    if (!arch || sscanf(arch, "sm_%1d%1d%c", &major, &minor, &extra) != 2 || major < 5)
        return rt_seterr(e, RT_EINVAL, "bad architecture '%s' (expected sm_XY, e.g. sm_90)",
                         arch ? arch : "(null)");
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "(no GPU: generic %s)", arch);
    d->ordinal = -1;
    d->cc_major = major;
    d->cc_minor = minor;
    int cc = major * 10 + minor;
    d->sm_count = cc >= 90 ? 132 : cc >= 80 ? 108 : 80;
    d->warp_size = 32;
    d->max_threads_per_block = 1024;
    d->max_threads_per_sm = (cc == 86 || cc == 89) ? 1536 : 2048;
    d->max_blocks_per_sm = cc >= 90 ? 32 : cc >= 80 ? 32 : 16;
    d->smem_per_block = 48 * 1024;
    d->smem_per_block_optin = cc >= 90 ? 227 * 1024 : cc >= 80 ? 163 * 1024 : 96 * 1024;
    d->smem_per_sm = cc >= 90 ? 228 * 1024 : cc >= 80 ? 164 * 1024 : 96 * 1024;
    d->regs_per_block = 65536;
    d->regs_per_sm = 65536;
    d->l2_bytes = cc >= 90 ? 50 << 20 : cc >= 80 ? 40 << 20 : 6 << 20;
    return RT_OK;
}
