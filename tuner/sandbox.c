/*
 * sandbox.c - the Lua host of the tuner's scripts (sandbox.h): the sandboxed state, its
 * limits, the protected run and its messages ("file:line: message").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lualib.h>

#include "sandbox.h"

#define INSN_STEP 100                  /* how often the count hook looks */
/* Stands in Lua's messages for a chunkname too long for LUA_IDSIZE, which Lua would cut. */
#define LONGNAME "\001script"

/* The state's companion, reached through lua_getallocf: the allocator's and the count hook's
 * state, the script's names and an error raised from C. */
struct sandbox {
    lua_State *L;
    size_t used;              /* bytes held by the state */
    int over;                 /* requests refused and not rescued by Lua's retry: errors */
    const void *refused;      /* the request just refused, to recognise Lua's retry */
    size_t refused_size;      /* 0 when the last request was not refused */
    long long insns;          /* instructions run since the last reset, to INSN_STEP */
    double deadline;          /* CLOCK_MONOTONIC seconds: the run's time limit */
    int expired;              /* the deadline passed: errors, no large allocation, from now on */
    int in_hook;              /* an error is being raised: allocation allowed (until the
                               * message handler is done, or the next hook) */
    int opened;               /* the libraries are open */
    char *chunkname;          /* as the caller gave it, for messages */
    char *source;             /* as given to Lua: "@" chunkname, or "@" LONGNAME */
    rt_err raised;            /* code != RT_OK when C raised the error (sandbox_fail) */
};

static long time_limit_ms = SANDBOX_TIME_LIMIT_MS;

void sandbox_set_time_limit(long ms)
{
    time_limit_ms = ms > 0 ? ms : SANDBOX_TIME_LIMIT_MS;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void start_clock(sandbox *sb)
{
    sb->deadline = now() + time_limit_ms * 1e-3;
}

/* Has the run's time run out? Sticky: once out, always out. */
static int expired(sandbox *sb)
{
    if (!sb->expired && now() > sb->deadline)
        sb->expired = 1;
    return sb->expired;
}

/* "time limit exceeded (10 s)" */
static const char *time_text(char *buf, size_t size)
{
    snprintf(buf, size, "time limit exceeded (%g s)", time_limit_ms * 1e-3);
    return buf;
}

/* The allocator: refuses to grow the state past SANDBOX_MEM_LIMIT. A refusal is an error unless
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
    /* Past the deadline nothing grows by more than a few KiB, so that a C function that builds
     * something large (string.rep, table.concat, ...) stops at its next allocation; small
     * ones still pass, for the error's own call frames and message. */
    if (nsize > old && nsize - old > 4096 && !sb->in_hook && expired(sb))
        return NULL;
    int retry = sb->refused_size == nsize && sb->refused == ptr;
    sb->refused_size = 0;           /* only the next request can be the retry */
    if (nsize > old && nsize - old > SANDBOX_MEM_LIMIT - sb->used) {
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
 * at its next instruction. The error is raised with hooks off; no Lua message handler can
 * catch it there, since the sandbox's xpcall runs its handler only after the unwinding. */
static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    sandbox *sb = get_sandbox(L);
    sb->in_hook = 0;   /* the last error may have been caught with no handler to clear it */
    sb->insns += INSN_STEP;
    if (sb->insns < SANDBOX_INSN_LIMIT && !sb->over && !expired(sb))
        return;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    char buf[64];
    const char *what = sb->expired ? time_text(buf, sizeof buf)
                       : sb->over  ? "memory limit exceeded (" SANDBOX_MEM_LIMIT_TEXT ")"
                                   : "instruction limit exceeded";
    lua_Debug where;
    sb->in_hook = 1;
    if (locate(L, sb->source, &where))
        lua_pushfstring(L, "%s:%d: %s", where.short_src, where.currentline, what);
    else
        lua_pushstring(L, what);
    lua_error(L);   /* in_hook stays set for the handler's frames: msghandler clears it */
}

/* The pcall message handler: "file:line: message", no traceback. Lua's own errors carry a
 * position already; one raised without (error(x, 0), a table) gets the script's line. */
static int msghandler(lua_State *L)
{
    sandbox *sb = get_sandbox(L);
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        sb->in_hook = 0;                /* __tostring is the script's: under the limits */
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
    }
    sb->in_hook = 1;                    /* the message is allocated past the deadline too */
    if (msg == NULL)
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    lua_Debug ar;
    if (!has_position(msg) && locate(L, sb->source, &ar))
        lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
    else
        lua_pushstring(L, msg);
    sb->in_hook = 0;
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
            return luaL_error(L, "__gc metamethods are not allowed in a sandboxed script");
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

/* Raise the time limit from a C function of the sandbox's library that loops. */
static void check_time(lua_State *L)
{
    sandbox *sb = get_sandbox(L);
    if (expired(sb)) {
        char buf[64];
        sb->in_hook = 1;   /* the message, and the handler's frames: msghandler clears it */
        lua_pushstring(L, time_text(buf, sizeof buf));
        lua_error(L);
    }
}

/* xpcall(f, msgh, ...): pcall, then msgh(error) after the unwinding. Lua runs a message
 * handler where the error is raised, and an error raised by the count hook is raised with
 * hooks off: a handler that loops there would never stop. Here it runs as any other call,
 * under the hook. An error in msgh is returned as the error. */
static int sandbox_xpcall(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushboolean(L, 1);                          /* stack: f msgh args true */
    lua_pushvalue(L, 1);                            /* stack: f msgh args true f */
    for (int i = 3; i <= n; i++)
        lua_pushvalue(L, i);                        /* stack: f msgh args true f args */
    if (lua_pcall(L, n - 2, LUA_MULTRET, 0) == LUA_OK)
        return lua_gettop(L) - n;                   /* true, results */
    sandbox *sb = get_sandbox(L);
    if (sb->insns >= SANDBOX_INSN_LIMIT || sb->over || sb->expired)
        return lua_error(L);                        /* past a limit: msgh would fail at once */
    lua_pushvalue(L, 2);                            /* stack: ... true err msgh */
    lua_insert(L, -2);                              /* stack: ... true msgh err */
    lua_pcall(L, 1, 1, 0);                          /* stack: ... true result */
    lua_pushboolean(L, 0);
    lua_replace(L, -3);                             /* stack: ... false result */
    return 2;
}

/* string.rep, with an empty result made at once: Lua's loops n times even when each copy is
 * empty. A long one is Lua's: its buffer is refused by the allocator. Upvalue: Lua's rep. */
static int sandbox_rep(lua_State *L)
{
    size_t l, lsep;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || l + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/* table.insert(t, [pos,] v), as ltablib.c's, with the time limit in its loop: a __len that
 * says 2^62 would otherwise keep it in C for good. */
static int sandbox_insert(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer e = (lua_Integer)((lua_Unsigned)luaL_len(L, 1) + 1), pos;
    switch (lua_gettop(L)) {
    case 2:
        pos = e;
        break;
    case 3:
        pos = luaL_checkinteger(L, 2);
        luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2, "position out of bounds");
        for (lua_Integer i = e; i > pos; i--) {
            if ((i & 4095) == 0)
                check_time(L);
            lua_geti(L, 1, i - 1);
            lua_seti(L, 1, i);                      /* t[i] = t[i - 1] */
        }
        break;
    default:
        return luaL_error(L, "wrong number of arguments to 'insert'");
    }
    lua_seti(L, 1, pos);
    return 0;
}

/* table.remove(t [, pos]), as ltablib.c's, with the time limit in its loop. */
static int sandbox_remove(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer size = luaL_len(L, 1);
    lua_Integer pos = luaL_optinteger(L, 2, size);
    if (pos != size)
        luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 2,
                      "position out of bounds");
    lua_geti(L, 1, pos);                            /* stack: t [pos] t[pos] */
    for (; pos < size; pos++) {
        if ((pos & 4095) == 0)
            check_time(L);
        lua_geti(L, 1, pos + 1);
        lua_seti(L, 1, pos);                        /* t[pos] = t[pos + 1] */
    }
    lua_pushnil(L);
    lua_seti(L, 1, pos);
    return 1;
}

/* The comparison of sandbox_sort: the script's function (upvalue 1) or '<', under the time
 * limit (comparing long strings takes a while, and Lua's sort runs in C). */
static int sort_less(lua_State *L)
{
    check_time(L);
    if (lua_isnil(L, lua_upvalueindex(1))) {
        lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
        return 1;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 2, 1);
    return 1;
}

/* table.sort(t [, comp]): Lua's (upvalue 1) with a comparison that looks at the clock. */
static int sandbox_sort(lua_State *L)
{
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, sort_less, 1);              /* stack: t comp sort t less */
    lua_call(L, 2, 0);
    return 0;
}

/* Replace lib[name] with fn, Lua's function as its upvalue. Stack: lib. */
static void wrap(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_getfield(L, -1, name);                      /* stack: lib original */
    lua_pushcclosure(L, fn, 1);                     /* stack: lib wrapped */
    lua_setfield(L, -2, name);
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
        "dofile", "loadfile", "load", "require", "io", "os", "package", "debug",
        "collectgarbage", NULL,
    };
    /* C functions whose time the limits cannot bound: patterns backtrack, a plain find is
     * quadratic, pack and unpack walk formats of any length, move loops over any range. */
    static const char *const removed_string[] = {
        "find", "match", "gmatch", "gsub", "pack", "packsize", "unpack", NULL,
    };
    for (const luaL_Reg *lib = libs; lib->name; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);   /* stack: lib */
        lua_pop(L, 1);
    }
    for (const char *const *name = removed; *name; name++) {
        lua_pushnil(L);
        lua_setglobal(L, *name);
    }
    lua_getglobal(L, LUA_STRLIBNAME);                /* stack: string */
    for (const char *const *name = removed_string; *name; name++) {
        lua_pushnil(L);
        lua_setfield(L, -2, *name);
    }
    wrap(L, "rep", sandbox_rep);
    lua_pop(L, 1);
    lua_getglobal(L, LUA_TABLIBNAME);                /* stack: table */
    lua_pushnil(L);
    lua_setfield(L, -2, "move");
    lua_pushcfunction(L, sandbox_insert);
    lua_setfield(L, -2, "insert");
    lua_pushcfunction(L, sandbox_remove);
    lua_setfield(L, -2, "remove");
    wrap(L, "sort", sandbox_sort);
    lua_pop(L, 1);
    lua_pushcfunction(L, sandbox_print);
    lua_setglobal(L, "print");
    lua_pushcfunction(L, sandbox_setmetatable);
    lua_setglobal(L, "setmetatable");
    lua_pushcfunction(L, sandbox_xpcall);
    lua_setglobal(L, "xpcall");
}


const char *sandbox_typename(lua_State *L, int idx)
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

int sandbox_fail(lua_State *L, int code, const char *fmt, ...)
{
    sandbox *sb = get_sandbox(L);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sb->raised.msg, sizeof sb->raised.msg, fmt, ap);
    va_end(ap);
    sb->raised.code = code;
    lua_pushstring(L, sb->raised.msg);
    return lua_error(L);
}

void sandbox_load(lua_State *L, const char *text, size_t len)
{
    if (luaL_loadbufferx(L, text, len, get_sandbox(L)->source, "t") != LUA_OK)
        lua_error(L);
}

void sandbox_reset_count(lua_State *L)
{
    sandbox *sb = get_sandbox(L);
    if (sb->insns < SANDBOX_INSN_LIMIT)   /* past the limit the hook keeps failing */
        sb->insns = 0;
    if (!sb->expired)
        start_clock(sb);
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

int sandbox_open(const char *chunkname, sandbox **out, rt_err *e)
{
    *out = NULL;
    sandbox *sb = calloc(1, sizeof *sb);
    if (!sb || !(sb->chunkname = strdup(chunkname)) ||
        !(sb->source = malloc(strlen(chunkname) + strlen(LONGNAME) + 2))) {
        sandbox_close(sb);
        return rt_seterr(e, RT_ENOMEM, "%s: out of memory", chunkname);
    }
    /* Lua cuts a long chunkname in its messages; report() puts the whole one back. */
    if (strlen(chunkname) + 1 < LUA_IDSIZE)
        sprintf(sb->source, "@%s", chunkname);
    else
        strcpy(sb->source, "@" LONGNAME);
    start_clock(sb);
    sb->L = lua_newstate(sandbox_alloc, sb);
    if (!sb->L) {
        sandbox_close(sb);
        return rt_seterr(e, RT_ENOMEM, "%s: cannot create a Lua state", chunkname);
    }
    lua_atpanic(sb->L, panic);
    lua_sethook(sb->L, count_hook, LUA_MASKCOUNT, INSN_STEP);
    *out = sb;
    return RT_OK;
}

void sandbox_close(sandbox *sb)
{
    if (!sb)
        return;
    if (sb->L)
        lua_close(sb->L);
    free(sb->chunkname);
    free(sb->source);
    free(sb);
}

/* The protected frame of sandbox_run. Stack: body ud. */
static int run_body(lua_State *L)
{
    sandbox *sb = get_sandbox(L);
    if (!sb->opened) {
        open_sandbox(L);
        sb->opened = 1;
    }
    lua_call(L, 1, 0);
    return 0;
}

int sandbox_run(sandbox *sb, lua_CFunction body, void *ud, rt_err *e)
{
    lua_State *L = sb->L;
    int rc = RT_OK;
    rt_clearerr(&sb->raised);
    start_clock(sb);
    lua_settop(L, 0);
    lua_pushcfunction(L, msghandler);               /* stack: msgh */
    lua_pushcfunction(L, run_body);                 /* stack: msgh run_body */
    lua_pushcfunction(L, body);                     /* stack: msgh run_body body */
    lua_pushlightuserdata(L, ud);                   /* stack: msgh run_body body ud */
    int status = lua_pcall(L, 2, 0, 1);             /* stack: msgh [error] */
    sb->in_hook = 0;
    char buf[64];
    const char *msg = status == LUA_OK ? NULL : lua_tostring(L, -1);
    if (sb->expired && (!msg || !strstr(msg, "time limit exceeded"))) {
        /* caught, or turned into a memory error, or raised by what the clock stopped */
        rc = rt_seterr(e, RT_ELUA, "%s: %s", sb->chunkname, time_text(buf, sizeof buf));
    } else if (status == LUA_OK && sb->over) {      /* caught, and no hook ran since */
        rc = rt_seterr(e, RT_ELUA, "%s: memory limit exceeded (" SANDBOX_MEM_LIMIT_TEXT ")",
                       sb->chunkname);
    } else if (status == LUA_OK) {
        rc = RT_OK;
    } else if (sb->raised.code != RT_OK) {
        rc = report(e, sb->raised.code, sb->chunkname, sb->raised.msg);
    } else if (status == LUA_ERRMEM && sb->over) {
        rc = rt_seterr(e, RT_ELUA, "%s: memory limit exceeded (" SANDBOX_MEM_LIMIT_TEXT ")",
                       sb->chunkname);
    } else if (status == LUA_ERRMEM) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: not enough memory", sb->chunkname);
    } else {
        rc = report(e, RT_ELUA, sb->chunkname, msg ? msg : "(error object is not a string)");
    }
    lua_settop(L, 0);
    return rc;
}

int read_file(const char *path, char **text, size_t *len, rt_err *e)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = RT_OK;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *b = realloc(buf, cap);
            if (!b) {
                rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
                goto done;
            }
            buf = b;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(f)) {
        rc = rt_seterr(e, RT_EIO, "%s: read error", path);
        goto done;
    }
    buf[n] = '\0';
    *text = buf;
    if (len)
        *len = n;
    buf = NULL;
done:
    free(buf);
    fclose(f);
    return rc;
}
