/*
 * codegen.c - the prelude for each operator and type, and the assembly of the unit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen.h"
#include "embed.h"
#include "optype.h"

/* A growing string; on allocation failure 'failed' is set and appends stop. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

static void sb_append(sbuf *b, const char *text, size_t len)
{
    if (b->failed)
        return;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->len + len + 1;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, text, len);
    b->len += len;
    b->s[b->len] = '\0';
}

/* The identity element of 'op' over 'type', as a CUDA expression. */
static const char *identity(rt_op op, rt_type t)
{
    static const char *const min_id[RT_TYPE_COUNT] = {
        "__int_as_float(0x7f800000)", "__longlong_as_double(0x7ff0000000000000LL)",
        "2147483647", "0xffffffffu", "9223372036854775807LL", "0xffffffffffffffffULL"};
    static const char *const max_id[RT_TYPE_COUNT] = {
        "__int_as_float(0xff800000)", "__longlong_as_double(0xfff0000000000000ULL)",
        "(-2147483647 - 1)", "0u", "(-9223372036854775807LL - 1)", "0ULL"};
    switch (op) {
    case RT_SUM: return "0";
    case RT_PROD: return "1";
    case RT_MIN: case RT_ARGMIN: return min_id[t];
    case RT_MAX: case RT_ARGMAX: return max_id[t];
    default: return NULL;
    }
}

/* The combine body; 'a' holds the lower indices. Integer sums and products go through the
 * unsigned type so that overflow wraps (signed overflow is undefined in C++). Float min/max
 * use fmin/fmax (a NaN is ignored unless every element is NaN) behind the empty marker: see
 * float_minmax_glue. */
static void combine(sbuf *b, rt_op op, rt_type t)
{
    static const char *const utype[RT_TYPE_COUNT] = {
        NULL, NULL, "unsigned int", "unsigned int", "unsigned long long", "unsigned long long"};
    const char *ct = optype_cuda_type(t);
    int fl = optype_is_float(t);
    const char *fsuf = t == RT_F32 ? "f" : "";
    switch (op) {
    case RT_SUM:
    case RT_PROD: {
        char sym = op == RT_SUM ? '+' : '*';
        if (fl)
            sb_printf(b, "return a %c b;", sym);
        else
            sb_printf(b, "return (%s)((%s)a %c (%s)b);", ct, utype[t], sym, utype[t]);
        break;
    }
    case RT_MIN:
        if (fl)
            sb_printf(b, "const rt_acc_t m = fmin%s(a, b); return rt_is_empty(a) ? b : rt_is_empty(b) ? a : m;", fsuf);
        else
            sb_printf(b, "return b < a ? b : a;");
        break;
    case RT_MAX:
        if (fl)
            sb_printf(b, "const rt_acc_t m = fmax%s(a, b); return rt_is_empty(a) ? b : rt_is_empty(b) ? a : m;", fsuf);
        else
            sb_printf(b, "return b > a ? b : a;");
        break;
    default:
        break;
    }
}

static void final_referenced(sbuf *b)
{
    /* referenced in an unevaluated operand: a unit that writes no result (a reference unit)
     * draws no "declared but never referenced" warning */
    sb_printf(b, "static_assert(sizeof(rt_final(rt_identity())) == sizeof(rt_acc_t), \"glue\");\n");
}

/* rt_final(acc): the finalize stage, applied by every template exactly where a result is
 * written to the caller's output (never to partials or carries that are combined again). It
 * is the identity here; float min/max map their empty marker to +-inf (float_minmax_glue).
 * RT_FINAL_IS_IDENTITY lets a template skip a pass that would only apply it. */
static void final_identity(sbuf *b)
{
    sb_printf(b, "#define RT_FINAL_IS_IDENTITY 1\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_final(rt_acc_t a) { return a; }\n");
    final_referenced(b);
}

/* argmin/argmax: the accumulator is {value, index}; index -1 marks the empty accumulator
 * (the identity). Elements are ordered by (NaN last, value, index), a total order, so the
 * combine is associative and commutative and every tree gives the same winner: the least
 * (greatest) value at the lowest index, NaN only when nothing else is there. */
static void arg_glue(sbuf *b, rt_op op, rt_type t)
{
    const char *better = op == RT_ARGMIN ? "<" : ">";
    sb_printf(b, "struct __align__(8) rt_acc_t { rt_value_t v; long long i; };\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() "
                 "{ rt_acc_t r; r.v = (rt_value_t)(%s); r.i = -1; return r; }\n", identity(op, t));
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) {\n"
                 "    if (a.i < 0) return b;\n    if (b.i < 0) return a;\n");
    if (optype_is_float(t))
        sb_printf(b, "    const bool an = a.v != a.v, bn = b.v != b.v;\n"
                     "    if (an != bn) return an ? b : a;\n"
                     "    if (!an && b.v != a.v) return b.v %s a.v ? b : a;\n", better);
    else
        sb_printf(b, "    if (b.v != a.v) return b.v %s a.v ? b : a;\n", better);
    sb_printf(b, "    return b.i < a.i ? b : a;\n}\n");
    final_identity(b);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                 "{ rt_acc_t r; r.v = v; r.i = (long long)i; return r; }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_down(rt_acc_t a, unsigned int d) "
                 "{ a.v = __shfl_down_sync(0xffffffffu, a.v, d); a.i = __shfl_down_sync(0xffffffffu, a.i, d); "
                 "return a; }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_up(rt_acc_t a, unsigned int d) "
                 "{ a.v = __shfl_up_sync(0xffffffffu, a.v, d); a.i = __shfl_up_sync(0xffffffffu, a.i, d); "
                 "return a; }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl(rt_acc_t a, int lane) "
                 "{ a.v = __shfl_sync(0xffffffffu, a.v, lane); a.i = __shfl_sync(0xffffffffu, a.i, lane); "
                 "return a; }\n");    /* Not every template shuffles up or by lane: referenced here in an unevaluated operand,
     * they draw no "declared but never referenced" warning. */
    sb_printf(b, "static_assert(sizeof(rt_shfl_up(rt_identity(), 1u)) == sizeof(rt_shfl(rt_identity(), 0)), "
                 "\"glue\");\n");
}

static void upper(char *dst, const char *src, size_t len)
{
    size_t i = 0;
    for (; src[i] && i + 1 < len; i++)
        dst[i] = (src[i] >= 'a' && src[i] <= 'z') ? (char)(src[i] - 32) : src[i];
    dst[i] = '\0';
}

/* The embedded header a line `#include "NAME.cuh"` names (templates/NAME.cuh), or NULL: such
 * headers are inlined so that the unit stays self-contained (it is what is hashed, stored and
 * compiled without a file system). Other includes are left alone (standalone.cuh sits under
 * #ifndef RT_PRELUDE and is not embedded). */
static const rt_embedded *embedded_include(const char *line, const char *eol)
{
    const char *p = line;
    while (p < eol && (*p == ' ' || *p == '\t'))
        p++;
    if ((size_t)(eol - p) < 12 || strncmp(p, "#include \"", 10) != 0)
        return NULL;
    const char *name = p + 10, *q = memchr(name, '"', (size_t)(eol - name));
    if (!q || q - name > 80 || q - name < 5 || strncmp(q - 4, ".cuh", 4) != 0)
        return NULL;
    char path[128];
    snprintf(path, sizeof path, "templates/%.*s", (int)(q - name), name);
    return embed_find(path);
}

/* `#line N "file"` with the file name escaped for a string literal: '"' and '\\' with a
 * backslash, control characters (a newline would end the directive and start a line of the
 * unit's own) and DEL as octal escapes. */
static void line_directive(sbuf *b, int line, const char *file)
{
    sb_printf(b, "#line %d \"", line > 0 ? line : 1);
    for (const unsigned char *p = (const unsigned char *)file; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            sb_printf(b, "\\%03o", *p);
        else
            sb_printf(b, "%s%c", *p == '"' || *p == '\\' ? "\\" : "", *p);
    }
    sb_printf(b, "\"\n");
}

/* Append 'text' (from 'file') with #line directives, inlining embedded headers one level
 * deep (a header that includes another embedded header is a template bug the tests catch). */
static void append_text(sbuf *b, const char *file, const char *text, int depth)
{
    line_directive(b, 1, file);
    int line = 1;
    for (const char *p = text; *p; line++) {
        const char *eol = strchr(p, '\n');
        const char *next = eol ? eol + 1 : p + strlen(p);
        if (!eol)
            eol = next;
        const rt_embedded *inc = depth == 0 ? embedded_include(p, eol) : NULL;
        if (inc) {
            append_text(b, inc->path, inc->text, depth + 1);
            sb_append(b, "\n", 1);
            line_directive(b, line + 1, file);
        } else {
            sb_append(b, p, (size_t)(next - p));
        }
        p = next;
    }
}

static int finish(sbuf *b, const char *file, const char *text, char **src, rt_err *e)
{
    append_text(b, file, text, 0);
    if (b->failed) {
        free(b->s);
        return rt_seterr(e, RT_ENOMEM, "out of memory generating %s", file);
    }
    *src = b->s;
    return RT_OK;
}

/* The lift of an element into the accumulator and the warp shuffles of a scalar accumulator.
 * With canon_nan (float min/max) an element that is NaN enters as the canonical NaN, so that
 * no element can forge the empty marker (float_minmax_glue). */
static void lift_and_shuffle(sbuf *b, const char *canon_nan)
{
    if (canon_nan)
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                     "{ (void)i; return v != v ? %s : v; }\n", canon_nan);
    else
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                     "{ (void)i; return v; }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_down(rt_acc_t a, unsigned int d) "
                 "{ return __shfl_down_sync(0xffffffffu, a, d); }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_up(rt_acc_t a, unsigned int d) "
                 "{ return __shfl_up_sync(0xffffffffu, a, d); }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl(rt_acc_t a, int lane) "
                 "{ return __shfl_sync(0xffffffffu, a, lane); }\n");    /* Not every template shuffles up or by lane: referenced here in an unevaluated operand,
     * they draw no "declared but never referenced" warning. */
    sb_printf(b, "static_assert(sizeof(rt_shfl_up(rt_identity(), 1u)) == sizeof(rt_shfl(rt_identity(), 0)), "
                 "\"glue\");\n");
}

/* The glue of an operator whose accumulator is its element type: identity, combine body,
 * lift, shuffle, rt_final (the identity). */
static void scalar_glue(sbuf *b, const char *ct, const char *ident, const char *body)
{
    sb_printf(b, "typedef %s rt_acc_t;\n", ct);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() { return (rt_acc_t)(%s); }\n",
              ident);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) { %s }\n",
              body);
    lift_and_shuffle(b, NULL);
    final_identity(b);
}

/* Float min/max. fmin/fmax ignore a NaN, and their identity is +-inf, so with +-inf as the
 * accumulator's identity "no element" and "only NaN" both end as +-inf, while the documented
 * result of an all-NaN input (or segment) is NaN, as fmin and numpy.nanmin give. So the
 * accumulator's identity is a distinct empty marker E, a signalling NaN (f32 0x7fbfffff,
 * f64 0x7ff7ffffffffffff): the hardware makes only quiet NaNs, and the lift turns every NaN
 * element into the canonical quiet NaN, so no element or combine result can equal E. The
 * combine treats E as the identity and never hands it to fmin:
 *     combine(a, b) = is_empty(a) ? b : is_empty(b) ? a : fmin(a, b)
 * which is E adjoined as identity to fmin's monoid, so associativity, commutativity and
 * every tree shape are kept (fmin of two NaNs is NaN). rt_final maps E to +-inf where a
 * result is written to the caller's output (empty input or segment: the identity, as the host
 * writes for n = 0); any other value, NaN included, passes. The cost per element is one
 * integer compare and select more than fmin alone (the lift's NaN test was there before). */
static void float_minmax_glue(sbuf *b, rt_op op, rt_type t, const char *body)
{
    const int f32 = t == RT_F32;
    const char *empty = f32 ? "0x7fbfffffu" : "0x7ff7ffffffffffffULL";
    const char *bits = f32 ? "__float_as_uint(a)" : "(unsigned long long)__double_as_longlong(a)";
    const char *make = f32 ? "__uint_as_float" : "__longlong_as_double";
    const char *cast = f32 ? "" : "(long long)";
    sb_printf(b, "typedef %s rt_acc_t;\n", optype_cuda_type(t));
    sb_printf(b, "#define RT_EMPTY_BITS %s\n", empty);
    sb_printf(b, "static __device__ __forceinline__ bool rt_is_empty(rt_acc_t a) "
                 "{ return %s == RT_EMPTY_BITS; }\n", bits);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() "
                 "{ return %s(%sRT_EMPTY_BITS); }\n", make, cast);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) { %s }\n",
              body);
    lift_and_shuffle(b, f32 ? "__uint_as_float(0x7fffffffu)"
                            : "__longlong_as_double(0x7fffffffffffffffLL)");
    sb_printf(b, "#define RT_FINAL_IS_IDENTITY 0\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_final(rt_acc_t a) "
                 "{ return rt_is_empty(a) ? (rt_acc_t)(%s) : a; }\n", identity(op, t));
    final_referenced(b);
}

/* The head of every unit: a comment, the op/type macros, commutativity, the value type. */
static int begin(sbuf *b, const rt_config *c, const char *opname, int commutes, rt_type t,
                 rt_err *e)
{
    const rt_family *f = c->family;
    if (f->needs_commutative && !commutes)
        return rt_seterr(e, RT_EINVAL, "family '%s' needs a commutative operator; '%s' is not",
                         f->name, opname);
    char uop[RT_NAME_MAX], utype[16];
    upper(uop, opname, sizeof uop);
    upper(utype, rt_type_name(t), sizeof utype);
    sb_printf(b, "/* redtune: family %s, op %s, type %s */\n", f->name, opname, rt_type_name(t));
    sb_printf(b, "#define RT_PRELUDE 1\n#define RT_OP_%s 1\n#define RT_TYPE_%s 1\n", uop, utype);
    sb_printf(b, "#define RT_COMMUTATIVE %d\n", commutes);
    sb_printf(b, "typedef %s rt_value_t;\n", optype_cuda_type(t));
    return RT_OK;
}

static int end(sbuf *b, const rt_config *c, char **src, rt_err *e)
{
    const rt_family *f = c->family;
    for (int i = 0; i < f->nparams; i++)
        sb_printf(b, "#define RT_%s %lld\n", f->params[i].name, c->values[i]);
    return finish(b, f->file, f->text, src, e);
}

int codegen_emit(const rt_config *c, rt_op op, rt_type t, char **src, rt_err *e)
{
    *src = NULL;
    if ((unsigned)op >= RT_OP_COUNT || (unsigned)t >= RT_TYPE_COUNT)
        return rt_seterr(e, RT_EINVAL, "unknown operator %d or type %d", (int)op, (int)t);
    sbuf b = {0};
    int rc = begin(&b, c, rt_op_name(op), optype_commutes(op), t, e);
    if (rc)
        return rc;
    if (optype_is_arg(op)) {
        arg_glue(&b, op, t);
    } else {
        sbuf body = {0};
        combine(&body, op, t);
        if (optype_is_float(t) && (op == RT_MIN || op == RT_MAX))
            float_minmax_glue(&b, op, t, body.s ? body.s : "");
        else
            scalar_glue(&b, optype_cuda_type(t), identity(op, t), body.s ? body.s : "");
        free(body.s);
    }
    return end(&b, c, src, e);
}

/* The glue of a user operator. Without a file it is scalar_glue; with one, lift and shuffle
 * come first and identity and combine last, each under a #line into the operator file (the
 * #defines that follow need no line of their own, and the template starts with its #line). */
static void user_glue(sbuf *b, const rt_user_op *op)
{
    char id[RT_USER_OP_ID];
    codegen_user_op_id(op, id);
    sb_printf(b, "/* redtune: user operator %s, definition %s */\n#define RT_OP_USER 1\n",
              op->name, id);
    const char *ct = optype_cuda_type(op->type);
    if (!op->file[0]) {
        scalar_glue(b, ct, op->identity, op->combine);
        return;
    }
    sb_printf(b, "typedef %s rt_acc_t;\n", ct);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() {\n");
    line_directive(b, op->identity_line, op->file);
    sb_printf(b, "return (rt_acc_t)(%s);\n}\n", op->identity);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t "
                 "rt_combine(rt_acc_t a, rt_acc_t b) {\n");
    line_directive(b, op->combine_line, op->file);
    size_t len = strlen(op->combine);
    sb_printf(b, "%s%s}\n", op->combine, len && op->combine[len - 1] == '\n' ? "" : "\n");
    lift_and_shuffle(b, NULL);
    final_identity(b);
}

/* ---- user CUDA text ---- */

static int ident_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* Skip a string or character literal that starts at p (at its quote); NULL when it does not
 * close on its line. */
static const char *skip_literal(const char *p)
{
    char quote = *p++;
    for (; *p && *p != '\n'; p++) {
        if (*p == '\\' && p[1] && p[1] != '\n')
            p++;
        else if (*p == quote)
            return p + 1;
    }
    return NULL;
}

int codegen_check_fragment(const char *text, int expr, int *line, const char **why)
{
    static const char opens[] = "([{", closes[] = ")]}";
    char stack[256];
    int lines[256], depth = 0;
    /* First what acts before comments and literals are found: splices and trigraphs. */
    *line = 1;
    *why = NULL;
    for (const char *p = text; *p && !*why; p++) {
        if (*p == '\\' && (p[1] == '\n' || (p[1] == '\r' && p[2] == '\n')))
            *why = "a line splice (backslash-newline) is not allowed";
        else if (p[0] == '?' && p[1] == '?' && p[2] && strchr("=/'()!<>-", p[2]))
            *why = "a trigraph is not allowed";
        else
            *line += *p == '\n';
    }
    if (*why)
        return RT_EINVAL;
    *line = 1;
    for (const char *p = text; *p; ) {
        unsigned char c = (unsigned char)*p;
        if (c == '\n') {
            ++*line;
            p++;
        } else if (c < 0x20 && c != '\t' && c != '\r' && c != '\f' && c != '\v') {
            *why = "a control character is not allowed";
        } else if (c == '\\') {
            *why = "a backslash outside a literal is not allowed";   /* \u0023 and the like */
        } else if (c == '#' || (c == '%' && p[1] == ':')) {
            *why = "a preprocessor directive ('#') is not allowed";
        } else if ((c == '<' && (p[1] == '%' || p[1] == ':')) || (c == '%' && p[1] == '>') ||
                   (c == ':' && p[1] == '>')) {
            *why = "a digraph (<% %> <: :> %:) is not allowed";
        } else if (c == '/' && p[1] == '/') {
            const char *eol = strchr(p, '\n');
            if (!eol && expr) {
                *why = "a // comment runs to the end of the text";
                break;
            }
            p = eol ? eol : p + strlen(p);
        } else if (c == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            if (!end) {
                *why = "a /* comment is not closed";
                break;
            }
            for (; p < end + 2; p++)
                *line += *p == '\n';
        } else if (c == '"' || c == '\'') {
            const char *end = skip_literal(p);
            if (!end) {
                *why = c == '"' ? "a string literal is not closed on its line"
                                : "a character literal is not closed on its line";
                break;
            }
            p = end;
        } else if (ident_char(c) || (c == '.' && p[1] >= '0' && p[1] <= '9')) {
            /* an identifier or a number, whole: a quote right after a number continues it
             * (1'000), one after an identifier starts a literal (u8"", L'x') */
            const char *q = p;
            int number = (c >= '0' && c <= '9') || c == '.';
            while (ident_char((unsigned char)*q) || (number && *q == '.') ||
                   (number && (*q == '+' || *q == '-') && strchr("eEpP", q[-1])) ||
                   (number && *q == '\'' && ident_char((unsigned char)q[1])))
                q++;
            if (!number && *q == '"' && q[-1] == 'R') {
                *why = "a raw string literal is not allowed";
                break;
            }
            if ((size_t)(q - p) == 7 && strncmp(p, "_Pragma", 7) == 0) {
                *why = "_Pragma is not allowed";
                break;
            }
            p = q;
        } else if (strchr(opens, c)) {
            if (depth == (int)sizeof stack) {
                *why = "brackets nest too deep";
                break;
            }
            stack[depth] = (char)c;
            lines[depth++] = *line;
            p++;
        } else if (strchr(closes, c)) {
            if (depth == 0 || stack[depth - 1] != opens[strchr(closes, c) - closes]) {
                *why = c == ')' ? "a ')' closes nothing open here"
                     : c == ']' ? "a ']' closes nothing open here"
                                : "a '}' closes nothing open here";
                break;
            }
            depth--;
            p++;
        } else {
            p++;
        }
        if (*why)
            break;
    }
    if (!*why && depth > 0) {
        *line = lines[depth - 1];
        *why = stack[depth - 1] == '(' ? "a '(' is not closed"
             : stack[depth - 1] == '[' ? "a '[' is not closed"
                                       : "a '{' is not closed";
    }
    return *why ? RT_EINVAL : RT_OK;
}

static int check_user(const rt_user_op *op, rt_err *e)
{
    if ((unsigned)op->type >= RT_TYPE_COUNT)
        return rt_seterr(e, RT_EINVAL, "operator '%s': unknown type %d", op->name, (int)op->type);
    if (!op->name[0])
        return rt_seterr(e, RT_EINVAL, "a user operator needs a name");
    for (const char *p = op->name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return rt_seterr(e, RT_EINVAL, "operator name '%s': use a-z, 0-9 and _", op->name);
    int line;
    const char *why;
    if (codegen_check_fragment(op->identity, 1, &line, &why))
        return rt_seterr(e, RT_EINVAL, "operator '%s': identity, line %d: %s", op->name, line,
                         why);
    /* without a file the body is written on the line of its braces */
    if (codegen_check_fragment(op->combine, !op->file[0], &line, &why))
        return rt_seterr(e, RT_EINVAL, "operator '%s': combine, line %d: %s", op->name, line,
                         why);
    return RT_OK;
}

void codegen_user_op_id(const rt_user_op *op, char out[RT_USER_OP_ID])
{
    sbuf b = {0};
    sb_printf(&b, "%d", (int)op->type);
    sb_append(&b, "", 1);   /* NUL-separated fields: no two definitions hash alike */
    sb_printf(&b, "%s", op->identity);
    sb_append(&b, "", 1);
    sb_printf(&b, "%s", op->combine);
    sb_append(&b, "", 1);
    sb_printf(&b, "%d", op->commutative ? 1 : 0);
    char hex[RT_HASH_HEX];
    hash_hex(b.s ? b.s : "", b.s ? b.len : 0, hex);
    free(b.s);
    memcpy(out, hex, RT_USER_OP_ID - 1);
    out[RT_USER_OP_ID - 1] = '\0';
}

int codegen_emit_user(const rt_config *c, const rt_user_op *op, char **src, rt_err *e)
{
    *src = NULL;
    int rc = check_user(op, e);
    if (rc)
        return rc;
    sbuf b = {0};
    if ((rc = begin(&b, c, op->name, op->commutative, op->type, e)))
        return rc;
    user_glue(&b, op);
    return end(&b, c, src, e);
}

/* The reference kernels of codegen_emit_user_check. */
static const char check_kernels[] =
    "static __device__ __forceinline__ bool rt_same(rt_acc_t x, rt_acc_t y)\n"
    "{\n"
    "    return x == y || (x != x && y != y);\n"
    "}\n"
    "static_assert(sizeof(rt_shfl_down(rt_identity(), 1u)) == sizeof(rt_acc_t) &&\n"
    "              sizeof(rt_shfl_up(rt_identity(), 1u)) == sizeof(rt_shfl(rt_identity(), 0)), \"glue\");\n"
    "extern \"C\" __global__ void rt_ref_chunks(const rt_value_t *in, unsigned long long n,\n"
    "                                           unsigned long long chunk, rt_acc_t *out)\n"
    "{\n"
    "    unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "    if (t >= (n + chunk - 1) / chunk)\n"
    "        return;\n"
    "    unsigned long long lo = t * chunk, hi = n - lo < chunk ? n : lo + chunk;\n"
    "    rt_acc_t acc = rt_lift(in[lo], lo);\n"
    "    for (unsigned long long i = lo + 1; i < hi; i++)\n"
    "        acc = rt_combine(acc, rt_lift(in[i], i));\n"
    "    out[t] = acc;\n"
    "}\n"
    "extern \"C\" __global__ void rt_ref_fold(const rt_acc_t *in, unsigned long long m,\n"
    "                                         rt_acc_t *out)\n"
    "{\n"
    "    if (blockIdx.x != 0 || threadIdx.x != 0)\n"
    "        return;\n"
    "    rt_acc_t acc = in[0];\n"
    "    for (unsigned long long i = 1; i < m; i++)\n"
    "        acc = rt_combine(acc, in[i]);\n"
    "    out[0] = acc;\n"
    "}\n"
    "extern \"C\" __global__ void rt_ref_identity(const rt_value_t *in, unsigned long long n,\n"
    "                                             unsigned long long *first_bad)\n"
    "{\n"
    "    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "         i < n; i += stride) {\n"
    "        rt_acc_t x = rt_lift(in[i], i);\n"
    "        if (!rt_same(rt_combine(rt_identity(), x), x) ||\n"
    "            !rt_same(rt_combine(x, rt_identity()), x))\n"
    "            atomicMin(first_bad, i);\n"
    "    }\n"
    "}\n"
    "extern \"C\" __global__ void rt_ref_identity_value(rt_acc_t *out)\n"
    "{\n"
    "    if (blockIdx.x == 0 && threadIdx.x == 0)\n"
    "        *out = rt_identity();\n"
    "}\n";

int codegen_emit_user_check(const rt_user_op *op, char **src, rt_err *e)
{
    *src = NULL;
    int rc = check_user(op, e);
    if (rc)
        return rc;
    sbuf b = {0};
    char utype[16];
    upper(utype, rt_type_name(op->type), sizeof utype);
    sb_printf(&b, "/* redtune: reference of user operator %s, type %s */\n", op->name,
              rt_type_name(op->type));
    sb_printf(&b, "#define RT_PRELUDE 1\n#define RT_TYPE_%s 1\n#define RT_COMMUTATIVE %d\n",
              utype, op->commutative ? 1 : 0);
    sb_printf(&b, "typedef %s rt_value_t;\n", optype_cuda_type(op->type));
    user_glue(&b, op);
    return finish(&b, "redtune/reference.cu", check_kernels, src, e);
}

int codegen_emit_helper(const char *file, const char *const *defines, int ndefines,
                        char **src, rt_err *e)
{
    *src = NULL;
    const rt_embedded *emb = embed_find(file);
    if (!emb)
        return rt_seterr(e, RT_ENOTFOUND, "no embedded template '%s'", file);
    sbuf b = {0};
    sb_printf(&b, "/* redtune: helper %s */\n", file);
    for (int i = 0; i < ndefines; i++) {
        const char *eq = strchr(defines[i], '=');
        if (!eq) {
            free(b.s);
            return rt_seterr(e, RT_EINVAL, "%s: define '%s' is not NAME=value", file, defines[i]);
        }
        sb_printf(&b, "#define RT_%.*s %s\n", (int)(eq - defines[i]), defines[i], eq + 1);
    }
    return finish(&b, file, emb->text, src, e);
}
