/*
 * codegen_user.c - user-defined operators (rt_user_op, op files): the accumulator and result
 * layouts of their CUDA fields, the checks of their fragments, their glue (map, combine,
 * finalize, struct accumulators), their identity, and their units (a family's kernel, and the
 * reference kernels the tuner's worker checks candidates against).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen.h"
#include "codegen_int.h"
#include "glue.h"
#include "hash.h"
#include "optype.h"
#include "sbuf.h"

/* ---- accumulator and result layouts ---- */

static const char *skip_blank(const char *p, int *line)
{
    for (;;) {
        if (*p == '\n') {
            ++*line;
            p++;
        } else if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') {
            p++;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
        } else if (p[0] == '/' && p[1] == '*' && strstr(p + 2, "*/")) {
            for (const char *end = strstr(p + 2, "*/") + 2; p < end; p++)
                *line += *p == '\n';
        } else {
            return p;
        }
    }
}

/* The identifier at p (its length; 0 when none). */
static size_t word_at(const char *p)
{
    size_t n = 0;
    if ((*p >= '0' && *p <= '9'))
        return 0;
    while (p[n] && ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
                    (p[n] >= '0' && p[n] <= '9') || p[n] == '_'))
        n++;
    return n;
}

static const char *const type_words[] = {"unsigned", "signed", "char", "short", "int",
                                         "long", "float", "double"};
#define NTYPE_WORDS ((int)(sizeof type_words / sizeof type_words[0]))

static int type_word(const char *p, size_t n)
{
    for (int k = 0; k < NTYPE_WORDS; k++)
        if (strlen(type_words[k]) == n && strncmp(p, type_words[k], n) == 0)
            return k;
    return -1;
}

/* A field type from the count of each of type_words: its canonical CUDA spelling and size,
 * or NULL. */
static const char *field_type(const int *w, size_t *size, int *is_float)
{
    enum { U, S, CH, SH, IN, LO, FL, DB };
    int sign = w[U] + w[S], other = w[CH] + w[SH] + w[LO] + w[FL] + w[DB];
    *is_float = 0;
    for (int k = 0; k < NTYPE_WORDS; k++)
        if (w[k] > (k == LO ? 2 : 1))
            return NULL;
    if (sign > 1)
        return NULL;
    if (w[FL] || w[DB]) {
        if (sign || w[IN] || other != 1)
            return NULL;
        *is_float = 1;
        *size = w[FL] ? 4 : 8;
        return w[FL] ? "float" : "double";
    }
    if (w[CH]) {
        if (w[IN] || other != 1)
            return NULL;
        *size = 1;
        return w[U] ? "unsigned char" : w[S] ? "signed char" : "char";
    }
    if (w[SH]) {
        if (other != 1)
            return NULL;
        *size = 2;
        return w[U] ? "unsigned short" : "short";
    }
    if (w[LO] == 2) {
        *size = 8;
        return w[U] ? "unsigned long long" : "long long";
    }
    if (w[LO] || (!w[IN] && !sign))
        return NULL;
    *size = 4;
    return w[U] ? "unsigned int" : "int";
}

int codegen_layout_parse(const char *text, codegen_layout *l, int *line, char *why, size_t len)
{
    memset(l, 0, sizeof *l);
    l->scalar = -1;
    *line = 1;
    const char *p = skip_blank(text, line);
    size_t n = word_at(p);
    int t = -1;
    if (n && n < 8) {
        char name[8];
        memcpy(name, p, n);
        name[n] = '\0';
        t = optype_parse_type(name);
    }
    if (t >= 0 && t <= RT_U64) {
        if (*skip_blank(p + n, line)) {
            snprintf(why, len, "text after the type name '%.*s'", (int)n, p);
            return RT_EINVAL;
        }
        l->scalar = t;
        l->size = optype_size((rt_type)t);
        return RT_OK;
    }
    if (n != 6 || strncmp(p, "struct", 6) != 0) {
        snprintf(why, len, "'%.*s' is not a type: write f32, f64, i32, u32, i64, u64 or "
                 "struct { T name; ... }", n ? (int)(n > 40 ? 40 : n) : 1, p);
        return RT_EINVAL;
    }
    p = skip_blank(p + n, line);
    if (*p != '{') {
        snprintf(why, len, "'{' expected after 'struct'");
        return RT_EINVAL;
    }
    p = skip_blank(p + 1, line);
    while (*p != '}') {
        int w[NTYPE_WORDS] = {0}, nw = 0, k;
        const char *type_at = p;
        for (; (n = word_at(p)) && (k = type_word(p, n)) >= 0; nw++, p = skip_blank(p + n, line))
            w[k]++;
        size_t size;
        int is_float;
        const char *ct = nw ? field_type(w, &size, &is_float) : NULL;
        if (!ct) {
            size_t tl = (size_t)(p - type_at);
            while (tl && strchr(" \t\r\n", type_at[tl - 1]))
                tl--;
            if (!nw)
                tl = word_at(p) ? word_at(p) : 1;
            snprintf(why, len, "'%.*s' is not a field type: use float, double, [unsigned] char, "
                     "short, int or long long", (int)(tl > 40 ? 40 : tl), type_at);
            return RT_EINVAL;
        }
        for (;;) {
            n = word_at(p);
            if (!n || type_word(p, n) >= 0 || (n == 6 && strncmp(p, "struct", 6) == 0)) {
                snprintf(why, len, "a field name is expected after '%s'", ct);
                return RT_EINVAL;
            }
            if (n >= sizeof l->f[0].name) {
                snprintf(why, len, "field name '%.*s...' is longer than %zu characters", 16, p,
                         sizeof l->f[0].name - 1);
                return RT_EINVAL;
            }
            for (int i = 0; i < l->nfields; i++)
                if (strlen(l->f[i].name) == n && strncmp(l->f[i].name, p, n) == 0) {
                    snprintf(why, len, "field '%.*s' is declared twice", (int)n, p);
                    return RT_EINVAL;
                }
            if (l->nfields == CODEGEN_FIELDS_MAX) {
                snprintf(why, len, "more than %d fields", CODEGEN_FIELDS_MAX);
                return RT_EINVAL;
            }
            int i = l->nfields++;
            memcpy(l->f[i].name, p, n);
            l->f[i].name[n] = '\0';
            l->f[i].ct = ct;
            l->f[i].size = size;
            l->f[i].is_float = is_float;
            p = skip_blank(p + n, line);
            if (*p == ',') {
                p = skip_blank(p + 1, line);
                continue;
            }
            if (*p == ';')
                break;
            snprintf(why, len, "';' expected after field '%s'", l->f[i].name);
            return RT_EINVAL;
        }
        p = skip_blank(p + 1, line);
        if (!*p) {
            snprintf(why, len, "the struct's '}' is missing");
            return RT_EINVAL;
        }
    }
    p = skip_blank(p + 1, line);
    if (*p == ';')
        p = skip_blank(p + 1, line);
    if (*p) {
        snprintf(why, len, "text after the struct's '}'");
        return RT_EINVAL;
    }
    if (l->nfields == 0) {
        snprintf(why, len, "the struct has no fields");
        return RT_EINVAL;
    }
    size_t off = 0;
    for (int i = 0; i < l->nfields; i++) {
        off = (off + l->f[i].size - 1) / l->f[i].size * l->f[i].size;
        l->f[i].off = off;
        off += l->f[i].size;
    }
    l->size = (off + 7) / 8 * 8;   /* struct __align__(8) */
    if (l->size > CODEGEN_STRUCT_MAX) {
        *line = 1;
        snprintf(why, len, "the struct is %zu bytes long (8-byte aligned); at most %d",
                 l->size, CODEGEN_STRUCT_MAX);
        return RT_EINVAL;
    }
    return RT_OK;
}

/* Is any of the optional fields given? Without them a unit is what it always was. */
static int user_extended(const rt_user_op *op)
{
    return op->map[0] || op->acc[0] || op->finalize[0] || op->result[0];
}

int codegen_user_fields(const rt_user_op *op, codegen_layout *acc, codegen_layout *res,
                        const char **field, int *line, char *why, size_t len)
{
    *line = 1;
    *field = "acc";
    if (op->acc[0]) {
        if (codegen_layout_parse(op->acc, acc, line, why, len))
            return RT_EINVAL;
    } else {
        memset(acc, 0, sizeof *acc);
        acc->scalar = (int)op->type;
        acc->size = optype_size(op->type);
        if (acc->size < 4) {
            snprintf(why, len, "a %s element needs an accumulator of 4 or 8 bytes: give acc "
                     "(and a map)", rt_type_name(op->type));
            return RT_EINVAL;
        }
    }
    *field = "map";
    *line = 1;
    if (acc->scalar < 0 && !op->map[0]) {
        snprintf(why, len, "missing: a struct accumulator needs a map from the element into it");
        return RT_EINVAL;
    }
    *field = "result";
    if (op->result[0]) {
        if (codegen_layout_parse(op->result, res, line, why, len))
            return RT_EINVAL;
        if (!op->finalize[0]) {
            *line = 1;
            snprintf(why, len, "given without a finalize (the default finalize returns the "
                     "accumulator itself)");
            return RT_EINVAL;
        }
    } else {
        *res = *acc;
    }
    return RT_OK;
}

/* A struct type named 'name' of layout l, and a check that the device lays it out as the
 * host did; or a typedef of a scalar. */
static void declare_type(sbuf *b, const char *name, const codegen_layout *l)
{
    if (l->scalar >= 0) {
        sb_printf(b, "typedef %s %s;\n", optype_cuda_type((rt_type)l->scalar), name);
        return;
    }
    sb_printf(b, "struct __align__(8) %s {", name);
    for (int i = 0; i < l->nfields; i++)
        sb_printf(b, " %s %s;", l->f[i].ct, l->f[i].name);
    sb_printf(b, " };\nstatic_assert(sizeof(%s) == %zu && sizeof(%s) <= %d, \"%s: the host's "
                 "layout\");\n", name, l->size, name, CODEGEN_STRUCT_MAX, name);
}

/* A function whose body is user text: the body on its own lines, under a #line into the
 * operator file when there is one. 'pre' goes before the #line. */
static void user_function(sbuf *b, const rt_user_op *op, const char *head, const char *pre,
                          const char *body, int line)
{
    sb_printf(b, "static __device__ __forceinline__ %s {\n%s", head, pre);
    if (op->file[0])
        codegen_line_directive(b, line, op->file);
    size_t len = strlen(body);
    sb_printf(b, "%s%s}\n", body, len && body[len - 1] == '\n' ? "" : "\n");
}

/* The glue of a user operator with map, acc, finalize or result: the types and the
 * conversions first, then identity, combine, map and finalize, each under a #line into the
 * operator file, then the shuffles (after a #line of their own). */
static void user_glue_extended(sbuf *b, const rt_user_op *op, const codegen_layout *acc,
                               const codegen_layout *res)
{
    int final = op->finalize[0] != 0;
    glue_conversions(b);
    declare_type(b, "rt_acc_t", acc);
    if (final && op->result[0])
        declare_type(b, "rt_res_t", res);
    else
        sb_printf(b, "typedef rt_acc_t rt_res_t;\n");
    sb_printf(b, "#define RT_FINAL_IS_IDENTITY %d\n#define RT_FINAL_IN_PLACE %d\n", !final,
              !final);
    if (acc->scalar >= 0) {
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() {\n");
        if (op->file[0])
            codegen_line_directive(b, op->identity_line, op->file);
        sb_printf(b, "return (rt_acc_t)(%s);\n}\n", op->identity);
    } else {
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() {\n");
        if (op->file[0])
            codegen_line_directive(b, op->identity_line, op->file);
        sb_printf(b, "const rt_acc_t rt_identity_value = %s;\nreturn rt_identity_value;\n}\n",
                  op->identity);
    }
    user_function(b, op, "rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b)", "", op->combine,
                  op->combine_line);
    if (op->map[0]) {
        user_function(b, op, "rt_acc_t rt_lift(rt_value_t x, unsigned long long i)",
                      "(void)x; (void)i;\n", op->map, op->map_line);
    } else {
        const char *x = op->type == RT_F16 ? "rt_h2f(x)" : op->type == RT_BF16 ? "rt_b2f(x)" : "x";
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t x, "
                     "unsigned long long i) { (void)i; return (rt_acc_t)(%s); }\n", x);
    }
    if (final)
        user_function(b, op, "rt_res_t rt_final(rt_acc_t a)", "", op->finalize,
                      op->finalize_line);
    else
        sb_printf(b, "static __device__ __forceinline__ rt_res_t rt_final(rt_acc_t a) "
                     "{ return a; }\n");
    if (op->file[0])
        codegen_line_directive(b, 1, "redtune/user_glue.cu");
    if (acc->scalar >= 0)
        glue_scalar_shuffles(b);
    else
        glue_struct_shuffles(b);
    sb_printf(b, "static_assert(sizeof(rt_final(rt_identity())) == sizeof(rt_res_t), \"glue\");\n");
}

/* The glue of a user operator. Without a file it is scalar_glue; with one, lift and shuffle
 * come first and identity and combine last, each under a #line into the operator file (the
 * #defines that follow need no line of their own, and the template starts with its #line).
 * An operator with map, acc, finalize or result: user_glue_extended. */
static void user_glue(sbuf *b, const rt_user_op *op, const codegen_layout *acc,
                      const codegen_layout *res)
{
    char id[RT_USER_OP_ID];
    codegen_user_op_id(op, id);
    sb_printf(b, "/* redtune: user operator %s, definition %s */\n#define RT_OP_USER 1\n",
              op->name, id);
    if (user_extended(op)) {
        user_glue_extended(b, op, acc, res);
        return;
    }
    const char *ct = optype_cuda_type(op->type);
    if (!op->file[0]) {
        glue_scalar(b, ct, op->identity, op->combine);
        return;
    }
    sb_printf(b, "typedef %s rt_acc_t;\n", ct);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() {\n");
    codegen_line_directive(b, op->identity_line, op->file);
    sb_printf(b, "return (rt_acc_t)(%s);\n}\n", op->identity);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t "
                 "rt_combine(rt_acc_t a, rt_acc_t b) {\n");
    codegen_line_directive(b, op->combine_line, op->file);
    size_t len = strlen(op->combine);
    sb_printf(b, "%s%s}\n", op->combine, len && op->combine[len - 1] == '\n' ? "" : "\n");
    glue_lift_and_shuffle(b, NULL);
    glue_final_identity(b);
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

static int check_user(const rt_user_op *op, codegen_layout *acc, codegen_layout *res,
                      rt_err *e)
{
    if ((unsigned)op->type >= RT_TYPE_COUNT)
        return rt_seterr(e, RT_EINVAL, "operator '%s': unknown type %d", op->name, (int)op->type);
    if (!op->name[0])
        return rt_seterr(e, RT_EINVAL, "a user operator needs a name");
    for (const char *p = op->name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return rt_seterr(e, RT_EINVAL, "operator name '%s': use a-z, 0-9 and _", op->name);
    /* what, its text, and whether it is written inside a line: without a file the old-style
     * body shares a line with its braces; the new fields' bodies have lines of their own */
    const struct { const char *what, *text; int expr; } frags[] = {
        {"identity", op->identity, 1},
        {"combine", op->combine, !op->file[0] && !user_extended(op)},
        {"map", op->map, 0},
        {"acc", op->acc, 1},
        {"finalize", op->finalize, 0},
        {"result", op->result, 1},
    };
    int line;
    const char *why;
    for (size_t k = 0; k < sizeof frags / sizeof frags[0]; k++)
        if ((k < 2 || frags[k].text[0]) &&
            codegen_check_fragment(frags[k].text, frags[k].expr, &line, &why))
            return rt_seterr(e, RT_EINVAL, "operator '%s': %s, line %d: %s", op->name,
                             frags[k].what, line, why);
    const char *field;
    char rule[160];
    if (codegen_user_fields(op, acc, res, &field, &line, rule, sizeof rule))
        return rt_seterr(e, RT_EINVAL, "operator '%s': %s, line %d: %s", op->name, field, line,
                         rule);
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
    /* the optional fields only where given, tagged: an older definition keeps its id */
    const char *const names[] = {"map", "acc", "finalize", "result"};
    const char *const texts[] = {op->map, op->acc, op->finalize, op->result};
    for (int k = 0; k < 4; k++)
        if (texts[k][0]) {
            sb_append(&b, "", 1);
            sb_printf(&b, "%s=%s", names[k], texts[k]);
        }
    char hex[RT_HASH_HEX];
    hash_hex(b.s ? b.s : "", b.s ? b.len : 0, hex);
    free(b.s);
    memcpy(out, hex, RT_USER_OP_ID - 1);
    out[RT_USER_OP_ID - 1] = '\0';
}

int codegen_emit_user(const rt_config *c, const rt_user_op *op, char **src, rt_err *e)
{
    *src = NULL;
    codegen_layout acc, res;
    int rc = check_user(op, &acc, &res, e);
    if (rc)
        return rc;
    sbuf b = {0};
    if ((rc = codegen_begin(&b, c, op->name, op->commutative, (rt_op)RT_OP_USER_FIRST, op->type, e)))
        return rc;
    user_glue(&b, op, &acc, &res);
    return codegen_end(&b, c, src, e);
}

/* The reference kernels of codegen_emit_user_check. */
static const char check_kernels[] =
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
    "                                         rt_res_t *out)\n"
    "{\n"
    "    if (blockIdx.x != 0 || threadIdx.x != 0)\n"
    "        return;\n"
    "    rt_acc_t acc = in[0];\n"
    "    for (unsigned long long i = 1; i < m; i++)\n"
    "        acc = rt_combine(acc, in[i]);\n"
    "    out[0] = rt_final(acc);\n"
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
    "extern \"C\" __global__ void rt_ref_identity_value(rt_res_t *out)\n"
    "{\n"
    "    if (blockIdx.x == 0 && threadIdx.x == 0)\n"
    "        *out = rt_final(rt_identity());\n"
    "}\n";

int codegen_emit_user_check(const rt_user_op *op, char **src, rt_err *e)
{
    *src = NULL;
    codegen_layout acc, res;
    int rc = check_user(op, &acc, &res, e);
    if (rc)
        return rc;
    sbuf b = {0};
    char utype[16];
    codegen_upper(utype, rt_type_name(op->type), sizeof utype);
    sb_printf(&b, "/* redtune: reference of user operator %s, type %s */\n", op->name,
              rt_type_name(op->type));
    sb_printf(&b, "#define RT_PRELUDE 1\n#define RT_TYPE_%s 1\n#define RT_COMMUTATIVE %d\n",
              utype, op->commutative ? 1 : 0);
    sb_printf(&b, "typedef %s rt_value_t;\n", optype_cuda_type(op->type));
    user_glue(&b, op, &acc, &res);
    /* rt_same: == for floats (-0 matches 0) and NaN matching NaN, field by field */
    sb_printf(&b, "static __device__ __forceinline__ bool rt_same(rt_acc_t x, rt_acc_t y)\n{\n");
    if (acc.scalar >= 0) {
        sb_printf(&b, "    return x == y || (x != x && y != y);\n}\n");
    } else {
        sb_printf(&b, "    return true");
        for (int i = 0; i < acc.nfields; i++) {
            const char *f = acc.f[i].name;
            if (acc.f[i].is_float)
                sb_printf(&b, " &&\n        (x.%s == y.%s || (x.%s != x.%s && y.%s != y.%s))", f,
                          f, f, f, f, f);
            else
                sb_printf(&b, " &&\n        x.%s == y.%s", f, f);
        }
        sb_printf(&b, ";\n}\n");
    }
    return codegen_finish(&b, "redtune/reference.cu", check_kernels, src, e);
}
