/*
 * opfile.c - user-defined operators from a Lua file: reading and checking the file, finding
 * the lines of its CUDA fragments for #line, and running its sample function (opfile.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "../runtime/optype.h"
#include "data.h"
#include "opfile.h"
#include "pool.h"
#include "sandbox.h"

#define FIELDS "name type identity combine commutative sample tolerance map acc finalize result"

/* One parse: inputs and the result, shared with the protected body. */
typedef struct parse {
    const char *chunkname;
    const char *text;
    size_t len;
    opfile *o;
} parse;

/* The string field 'key' of the table at index 1 into dst (size bytes); "" when absent and
 * not required. */
static void get_string(lua_State *L, parse *p, const char *key, const char *what, char *dst,
                       size_t size)
{
    lua_getfield(L, 1, key);                        /* stack: t value */
    if (lua_type(L, -1) != LUA_TSTRING) {
        if (lua_isnil(L, -1))
            sandbox_fail(L, RT_EINVAL, "%s: field '%s' is missing (%s)", p->chunkname, key,
                         what);
        sandbox_fail(L, RT_EINVAL, "%s: field '%s' must be a string (%s), not %s",
                     p->chunkname, key, what, sandbox_typename(L, -1));
    }
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (len == 0 || strspn(s, " \t\r\n") == len)
        sandbox_fail(L, RT_EINVAL, "%s: field '%s' is empty (%s)", p->chunkname, key, what);
    if (len >= size)
        sandbox_fail(L, RT_EINVAL, "%s: field '%s' is %zu bytes long; at most %zu",
                     p->chunkname, key, len, size - 1);
    if (strlen(s) != len)
        sandbox_fail(L, RT_EINVAL, "%s: field '%s' holds a NUL byte", p->chunkname, key);
    memcpy(dst, s, len + 1);
    lua_pop(L, 1);
}

/* An optional string field: "" when absent, else as get_string. */
static void get_optional(lua_State *L, parse *p, const char *key, const char *what, char *dst,
                         size_t size)
{
    int absent = lua_getfield(L, 1, key) == LUA_TNIL;   /* stack: t value */
    lua_pop(L, 1);
    if (absent)
        dst[0] = '\0';
    else
        get_string(L, p, key, what, dst, size);
}

/* The scalar type an accumulator or result text names (f32 ... u64), -1 for a struct, -2
 * for text that codegen_user_fields refuses later, with its line. */
static int scalar_of(const char *text)
{
    codegen_layout l;
    int line;
    char why[160];
    return codegen_layout_parse(text, &l, &line, why, sizeof why) ? -2 : l.scalar;
}

/* The identity: a CUDA expression, or a Lua number written as one (of a scalar
 * accumulator's type). */
static void get_identity(lua_State *L, parse *p)
{
    rt_user_op *op = &p->o->op;
    lua_getfield(L, 1, "identity");                 /* stack: t identity */
    if (lua_type(L, -1) != LUA_TNUMBER) {
        lua_pop(L, 1);
        get_string(L, p, "identity", "a CUDA expression, or a number", op->identity,
                   sizeof op->identity);
        return;
    }
    int at = op->acc[0] ? scalar_of(op->acc) : (int)op->type;
    if (at == -2)
        at = (int)op->type;   /* the accumulator's own error comes later */
    if (at < 0)
        sandbox_fail(L, RT_EINVAL, "%s: field 'identity' must be a CUDA expression or brace "
                     "initializer of the accumulator struct, not a number", p->chunkname);
    rt_type t = (rt_type)at;
    int isint;
    lua_Integer i = lua_tointegerx(L, -1, &isint);
    double d = lua_tonumber(L, -1);
    if (optype_is_float(t)) {
        if (!isfinite(d))
            sandbox_fail(L, RT_EINVAL, "%s: field 'identity' is %g; write an infinity or NaN "
                         "as a CUDA expression string", p->chunkname, d);
        snprintf(op->identity, sizeof op->identity, "%.17g", d);
    } else if (!isint) {
        sandbox_fail(L, RT_EINVAL, "%s: field 'identity' must be an integer for %s, not %g",
                     p->chunkname, rt_type_name(t), d);
    } else if (optype_is_signed(t)) {
        snprintf(op->identity, sizeof op->identity, "(%lldLL)", (long long)i);
    } else {
        snprintf(op->identity, sizeof op->identity, "%lluULL", (unsigned long long)i);
    }
    lua_pop(L, 1);
}

/* Is the key at idx one of FIELDS? */
static int is_field(lua_State *L, int idx)
{
    static const char *const fields[] = {"name", "type", "identity", "combine", "commutative",
                                         "sample", "tolerance", "map", "acc", "finalize",
                                         "result"};
    if (lua_type(L, idx) != LUA_TSTRING)
        return 0;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strcmp(lua_tostring(L, idx), fields[i]) == 0)
            return 1;
    return 0;
}

/* The protected body of opfile_parse. Stack on entry: the parse (a light userdata). */
static int pparse(lua_State *L)
{
    parse *p = lua_touserdata(L, 1);
    opfile *o = p->o;
    lua_settop(L, 0);
    sandbox_load(L, p->text, p->len);
    lua_call(L, 0, 1);                              /* stack: t */
    if (!lua_istable(L, 1))
        return sandbox_fail(L, RT_EINVAL, "%s: the operator file must return a table (fields: "
                            FIELDS "), not %s", p->chunkname, sandbox_typename(L, 1));
    lua_pushnil(L);
    while (lua_next(L, 1)) {                        /* stack: t key value */
        if (!is_field(L, -2))
            return sandbox_fail(L, RT_EINVAL, "%s: unknown field '%s' (fields: " FIELDS ")",
                                p->chunkname, luaL_tolstring(L, -2, NULL));
        lua_pop(L, 1);
    }

    char type[16];
    get_string(L, p, "name", "the operator's name: a-z, 0-9 and _", o->op.name,
               sizeof o->op.name);
    for (const char *c = o->op.name; *c; c++)
        if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_'))
            return sandbox_fail(L, RT_EINVAL, "%s: name '%s': use a-z, 0-9 and _", p->chunkname,
                                o->op.name);
    if (optype_parse_op(o->op.name) >= 0)
        return sandbox_fail(L, RT_EINVAL, "%s: name '%s' is a built-in operator; give the "
                            "operator a name of its own", p->chunkname, o->op.name);
    get_string(L, p, "type", "the element type: f32, f64, i32, u32, i64, u64, f16, bf16, i8 "
               "or u8", type, sizeof type);
    int t = optype_parse_type(type);
    if (t < 0)
        return sandbox_fail(L, RT_EINVAL, "%s: field 'type': unknown type '%s' (known: %s)",
                            p->chunkname, type, optype_type_list());
    o->op.type = (rt_type)t;
    get_optional(L, p, "acc", "the accumulator: f32, f64, i32, u32, i64, u64 or struct { ... }",
                 o->op.acc, sizeof o->op.acc);
    get_identity(L, p);
    get_string(L, p, "combine", "the CUDA body of rt_combine(a, b), a the lower indices",
               o->op.combine, sizeof o->op.combine);
    get_optional(L, p, "map", "the CUDA body of rt_lift(x, i): element x at index i into the "
                 "accumulator", o->op.map, sizeof o->op.map);
    get_optional(L, p, "finalize", "the CUDA body of rt_final(a): the accumulator into the "
                 "result", o->op.finalize, sizeof o->op.finalize);
    get_optional(L, p, "result", "the result: f32, f64, i32, u32, i64, u64 or struct { ... }",
                 o->op.result, sizeof o->op.result);

    lua_getfield(L, 1, "commutative");              /* stack: t commutative */
    if (!lua_isboolean(L, -1))
        return sandbox_fail(L, RT_EINVAL, "%s: field 'commutative' %s%s (true or false: "
                            "whether combine(a, b) == combine(b, a))", p->chunkname,
                            lua_isnil(L, -1) ? "is missing" : "must be a boolean, not ",
                            lua_isnil(L, -1) ? "" : sandbox_typename(L, -1));
    o->op.commutative = lua_toboolean(L, -1);
    lua_pop(L, 1);

    lua_getfield(L, 1, "sample");                   /* stack: t sample */
    if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
        return sandbox_fail(L, RT_EINVAL, "%s: field 'sample' must be a function (i, r) -> "
                            "element i, not %s", p->chunkname, sandbox_typename(L, -1));
    o->has_sample = lua_isfunction(L, -1);
    lua_pop(L, 1);

    /* the result's type decides: a float scalar is compared with a tolerance */
    const char *res = o->op.result[0] ? o->op.result : o->op.acc[0] ? o->op.acc : type;
    int rt = scalar_of(res);
    o->tolerance = rt == RT_F32 ? OPFILE_TOL_F32 : rt == RT_F64 ? OPFILE_TOL_F64 : 0;
    lua_getfield(L, 1, "tolerance");                /* stack: t tolerance */
    if (!lua_isnil(L, -1)) {
        if (rt != RT_F32 && rt != RT_F64)
            return sandbox_fail(L, RT_EINVAL, "%s: field 'tolerance' applies to f32 and f64 "
                                "only; %s results are compared bit for bit", p->chunkname,
                                rt >= 0 ? rt_type_name((rt_type)rt) : "struct");
        if (lua_type(L, -1) != LUA_TNUMBER || !(lua_tonumber(L, -1) >= 0) ||
            !isfinite(lua_tonumber(L, -1)))
            return sandbox_fail(L, RT_EINVAL, "%s: field 'tolerance' must be a number >= 0 (the "
                                "relative error allowed), not %s", p->chunkname,
                                lua_type(L, -1) == LUA_TNUMBER ? luaL_tolstring(L, -1, NULL)
                                                               : sandbox_typename(L, -1));
        o->tolerance = lua_tonumber(L, -1);
    }
    return 0;
}

/* The line of 'value' in the file: its first occurrence after the first "key =" (a long
 * string [[...]] is the value verbatim); else the line of that "key ="; else 0. Later keys
 * need no search: what follows them follows the first. One pass, linear in the file. */
static int find_line(const char *text, size_t len, const char *key, const char *value)
{
    size_t klen = strlen(key), vlen = strlen(value);
    const char *end = text + len;
    for (const char *p = text; (p = memmem(p, (size_t)(end - p), key, klen)) != NULL;
         p += klen) {
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        const char *q = p + klen;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        if (q >= end || *q != '=' || (q + 1 < end && q[1] == '='))
            continue;
        const char *v = memmem(q, (size_t)(end - q), value, vlen);
        int line = 1;
        for (const char *c = text; c < (v ? v : p); c++)
            line += *c == '\n';
        return line;
    }
    return 0;
}

/* A field that becomes CUDA text (codegen_check_fragment): "file:line: field 'combine': why",
 * the line in the file when the field's own line is known. */
static int check_cuda(const opfile *o, const char *field, const char *text, int field_line,
                      int expr, rt_err *e)
{
    int line;
    const char *why;
    if (codegen_check_fragment(text, expr, &line, &why) == RT_OK)
        return RT_OK;
    if (field_line > 0)
        return rt_seterr(e, RT_EINVAL, "%s:%d: field '%s': %s (docs/ops.md)", o->op.file,
                         field_line + line - 1, field, why);
    return rt_seterr(e, RT_EINVAL, "%s: field '%s', line %d: %s (docs/ops.md)", o->op.file,
                     field, line, why);
}

int opfile_parse(const char *text, size_t len, const char *chunkname, opfile *o, rt_err *e)
{
    memset(o, 0, sizeof *o);
    if (len > OPFILE_MAX_BYTES)
        return rt_seterr(e, RT_EINVAL, "%s: the operator file is %zu bytes long; at most %d "
                         "(1 MiB)", chunkname, len, OPFILE_MAX_BYTES);
    if (strlen(chunkname) >= sizeof o->op.file)
        return rt_seterr(e, RT_EINVAL, "%s: the operator file's name is too long", chunkname);
    sandbox *sb = NULL;
    parse p = {chunkname, text, len, o};
    int rc = sandbox_open(chunkname, &sb, e);
    if (rc == RT_OK)
        rc = sandbox_run(sb, pparse, &p, e);
    sandbox_close(sb);
    if (rc == RT_OK && !(o->text = malloc(len + 1)))
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", chunkname);
    if (rc != RT_OK) {
        opfile_free(o);
        return rc;
    }
    memcpy(o->text, text, len);
    o->text[len] = '\0';
    o->len = len;
    snprintf(o->op.file, sizeof o->op.file, "%s", chunkname);
    rt_user_op *op = &o->op;
    op->identity_line = find_line(text, len, "identity", op->identity);
    op->combine_line = find_line(text, len, "combine", op->combine);
    op->map_line = op->map[0] ? find_line(text, len, "map", op->map) : 0;
    op->acc_line = op->acc[0] ? find_line(text, len, "acc", op->acc) : 0;
    op->finalize_line = op->finalize[0] ? find_line(text, len, "finalize", op->finalize) : 0;
    op->result_line = op->result[0] ? find_line(text, len, "result", op->result) : 0;
    if ((rc = check_cuda(o, "identity", op->identity, op->identity_line, 1, e)) ||
        (rc = check_cuda(o, "combine", op->combine, op->combine_line, 0, e)) ||
        (op->map[0] && (rc = check_cuda(o, "map", op->map, op->map_line, 0, e))) ||
        (op->acc[0] && (rc = check_cuda(o, "acc", op->acc, op->acc_line, 1, e))) ||
        (op->finalize[0] &&
         (rc = check_cuda(o, "finalize", op->finalize, op->finalize_line, 0, e))) ||
        (op->result[0] && (rc = check_cuda(o, "result", op->result, op->result_line, 1, e)))) {
        opfile_free(o);
        return rc;
    }
    /* the rules between the fields, at the line of the field at fault */
    codegen_layout acc, res;
    const char *field;
    int line;
    char why[160];
    if (codegen_user_fields(op, &acc, &res, &field, &line, why, sizeof why)) {
        int at = strcmp(field, "acc") == 0 ? op->acc_line
               : strcmp(field, "result") == 0 ? op->result_line
               : strcmp(field, "map") == 0 ? op->map_line : 0;
        if (at > 0)
            rc = rt_seterr(e, RT_EINVAL, "%s:%d: field '%s': %s (docs/ops.md)", op->file,
                           at + line - 1, field, why);
        else
            rc = rt_seterr(e, RT_EINVAL, "%s: field '%s': %s (docs/ops.md)", op->file, field,
                           why);
        opfile_free(o);
    }
    return rc;
}

int opfile_load(const char *path, opfile *o, rt_err *e)
{
    char *text = NULL;
    size_t len = 0;
    memset(o, 0, sizeof *o);
    int rc = read_file(path, &text, &len, e);
    if (rc == RT_OK)
        rc = opfile_parse(text, len, path, o, e);
    free(text);
    return rc;
}

void opfile_free(opfile *o)
{
    if (o) {
        free(o->text);
        memset(o, 0, sizeof *o);
    }
}

/* ---- the sample function ---- */

typedef struct sample_job {
    const char *text, *chunkname;
    size_t len;
    rt_type type;
    void *buf;
    unsigned long long lo, hi, at;   /* the range, and the element being made */
    uint64_t seed;
    int rc;
    rt_err err;
} sample_job;

/* A sample as bf16 and f16 bits, rounded to nearest even through f32 (a double rounding
 * that test data can live with); NaN stays NaN, overflow goes to infinity. */
static uint16_t to_bf16(double d)
{
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (f != f)
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static uint16_t to_f16(double d)
{
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return sign | 0x7e00u;
    if (a >= 0x477ff000u)                  /* 65520 and up round to infinity */
        return sign | 0x7c00u;
    if (a < 0x38800000u) {                 /* below 2^-14: a subnormal of 2^-24 units */
        float v;
        memcpy(&v, &a, 4);
        return sign | (uint16_t)lrintf(v * 16777216.0f);
    }
    uint32_t r = a - 0x38000000u;          /* exponent bias 127 -> 15 */
    r += 0xfffu + ((r >> 13) & 1u);
    return sign | (uint16_t)(r >> 13);
}

/* The protected body of one thread's share. Stack on entry: the job. */
static int psample(lua_State *L)
{
    sample_job *j = lua_touserdata(L, 1);
    lua_settop(L, 0);
    sandbox_load(L, j->text, j->len);
    lua_call(L, 0, 1);                              /* stack: t */
    if (!lua_istable(L, 1) || lua_getfield(L, 1, "sample") != LUA_TFUNCTION)
        return sandbox_fail(L, RT_EINVAL, "%s: the file gave no sample function on a second "
                            "run", j->chunkname);
    uint64_t s = data_mix(j->seed);                 /* stack: t sample */
    int fl = optype_is_float(j->type);
    for (j->at = j->lo; j->at < j->hi; j->at++) {
        unsigned long long i = j->at;
        lua_pushvalue(L, 2);
        lua_pushinteger(L, (lua_Integer)i);
        lua_pushinteger(L, (lua_Integer)data_mix(s ^ i));
        sandbox_reset_count(L);
        lua_call(L, 2, 1);                          /* stack: t sample value */
        int isint = 0;
        lua_Integer v = lua_type(L, 3) == LUA_TNUMBER ? lua_tointegerx(L, 3, &isint) : 0;
        if (fl ? lua_type(L, 3) != LUA_TNUMBER : !isint)
            return sandbox_fail(L, RT_EINVAL, "%s: sample(%llu, r) returned %s, not %s",
                                j->chunkname, i, lua_type(L, 3) == LUA_TNUMBER
                                    ? luaL_tolstring(L, 3, NULL) : sandbox_typename(L, 3),
                                fl ? "a number" : "an integer");
        switch (j->type) {
        case RT_F32: ((float *)j->buf)[i] = (float)lua_tonumber(L, 3); break;
        case RT_F64: ((double *)j->buf)[i] = (double)lua_tonumber(L, 3); break;
        case RT_F16: ((uint16_t *)j->buf)[i] = to_f16(lua_tonumber(L, 3)); break;
        case RT_BF16: ((uint16_t *)j->buf)[i] = to_bf16(lua_tonumber(L, 3)); break;
        case RT_I8: case RT_U8: ((uint8_t *)j->buf)[i] = (uint8_t)v; break;
        case RT_I32: case RT_U32: ((uint32_t *)j->buf)[i] = (uint32_t)v; break;
        default: ((uint64_t *)j->buf)[i] = (uint64_t)v; break;
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* Job k of the pool: one thread's share, in a sandbox of its own. */
static void sample_range(int k, void *arg)
{
    sample_job *j = (sample_job *)arg + k;
    sandbox *sb = NULL;
    j->rc = sandbox_open(j->chunkname, &sb, &j->err);
    if (j->rc == RT_OK)
        j->rc = sandbox_run(sb, psample, j, &j->err);
    sandbox_close(sb);
}

int opfile_sample(const char *text, size_t len, const char *chunkname, rt_type type, void *buf,
                  unsigned long long n, uint64_t seed, int threads, rt_err *e)
{
    /* A share of at least 4096 elements: a sandbox costs about as much as that many calls. */
    unsigned long long shares = n / 4096 + 1;
    int njobs = threads < 1 ? 1 : (unsigned long long)threads < shares ? threads : (int)shares;
    sample_job *jobs = calloc((size_t)njobs, sizeof *jobs);
    if (!jobs)
        return rt_seterr(e, RT_ENOMEM, "%s: out of memory for the sample threads", chunkname);
    for (int k = 0; k < njobs; k++) {
        sample_job *j = &jobs[k];
        j->text = text;
        j->chunkname = chunkname;
        j->len = len;
        j->type = type;
        j->buf = buf;
        j->lo = n * (unsigned long long)k / (unsigned long long)njobs;
        j->hi = n * (unsigned long long)(k + 1) / (unsigned long long)njobs;
        j->seed = seed;
    }
    pool_run(njobs, njobs, sample_range, jobs);
    int rc = RT_OK;
    for (int k = 0; k < njobs && rc == RT_OK; k++)   /* the error of the lowest element */
        if (jobs[k].rc != RT_OK)
            rc = rt_seterr(e, jobs[k].rc, "%s (making element %llu of the test data)",
                           jobs[k].err.msg, jobs[k].at);
    free(jobs);
    return rc;
}
