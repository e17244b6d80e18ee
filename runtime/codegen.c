/*
 * codegen.c - the prelude for each operator and type, and the assembly of the unit: the
 * head (op/type macros), the glue, the parameters, the template with its headers inlined.
 * User operators' units are codegen_user.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen.h"
#include "codegen_int.h"
#include "embed.h"
#include "glue.h"
#include "optype.h"
#include "sbuf.h"

void codegen_upper(char *dst, const char *src, size_t len)
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
void codegen_line_directive(sbuf *b, int line, const char *file)
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
    codegen_line_directive(b, 1, file);
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
            codegen_line_directive(b, line + 1, file);
        } else {
            sb_append(b, p, (size_t)(next - p));
        }
        p = next;
    }
}

int codegen_finish(sbuf *b, const char *file, const char *text, char **src, rt_err *e)
{
    append_text(b, file, text, 0);
    if (b->failed) {
        free(b->s);
        return rt_seterr(e, RT_ENOMEM, "out of memory generating %s", file);
    }
    *src = b->s;
    return RT_OK;
}

/* The head of every unit: a comment, the op/type macros, commutativity, the value type. */
int codegen_begin(sbuf *b, const rt_config *c, const char *opname, int commutes, rt_op op,
                 rt_type t, rt_err *e)
{
    const rt_family *f = c->family;
    if (f->needs_commutative && !commutes)
        return rt_seterr(e, RT_EINVAL, "family '%s' needs a commutative operator; '%s' is not",
                         f->name, opname);
    char uop[RT_NAME_MAX], utype[16];
    codegen_upper(uop, opname, sizeof uop);
    char text[96];
    codegen_upper(utype, rt_type_name(optype_elem(t)), sizeof utype);
    optype_spec_text(op, t, text, sizeof text);
    sb_printf(b, "/* redtune: family %s, op %s, type %s */\n", f->name, opname, text);
    sb_printf(b, "#define RT_PRELUDE 1\n#define RT_OP_%s 1\n#define RT_TYPE_%s 1\n", uop, utype);
    sb_printf(b, "#define RT_COMMUTATIVE %d\n", commutes);
    sb_printf(b, "typedef %s rt_value_t;\n", optype_cuda_type(t));
    return RT_OK;
}

int codegen_loads(rt_err *e)
{
    const char *v = getenv("REDTUNE_LOADS");
    if (!v || !*v || !strcmp(v, "stream"))
        return CODEGEN_LOADS_STREAM;
    if (!strcmp(v, "keep"))
        return CODEGEN_LOADS_KEEP;
    rt_seterr(e, RT_EINVAL, "REDTUNE_LOADS is '%.40s'; it takes stream (the default: the input "
              "read with the streaming hint) or keep (no hint: the input stays in the L2 for a "
              "later read)", v);
    return -1;
}

int codegen_end(sbuf *b, const rt_config *c, char **src, rt_err *e)
{
    const rt_family *f = c->family;
    int loads = codegen_loads(e);
    if (loads < 0) {
        free(b->s);
        return RT_EINVAL;
    }
    for (int i = 0; i < f->nparams; i++)
        sb_printf(b, "#define RT_%s %lld\n", f->params[i].name, c->values[i]);
    if (loads == CODEGEN_LOADS_KEEP)
        sb_printf(b, "#define RT_LOAD_KEEP 1\n");
    if (c->bounds) {
        if (!f->bounds || c->bounds > 2) {
            free(b->s);
            return rt_seterr(e, RT_EINVAL, "family %s cannot read its bounds on the GPU "
                             "(RT_BOUNDS %d)", f->name, c->bounds);
        }
        sb_printf(b, "#define RT_BOUNDS %d\n", c->bounds);
    }
    return codegen_finish(b, f->file, f->text, src, e);
}

int codegen_emit(const rt_config *c, rt_op op, rt_type t, char **src, rt_err *e)
{
    *src = NULL;
    optype_ts ts;
    char why[160];
    if ((unsigned)op >= RT_OP_COUNT)
        return rt_seterr(e, RT_EINVAL, "unknown operator %d", (int)op);
    if (optype_resolve(op, t, &ts, why, sizeof why))
        return rt_seterr(e, RT_EINVAL, "%s", why);
    sbuf b = {0};
    int rc = codegen_begin(&b, c, rt_op_name(op), optype_commutes(op), op, ts.canon, e);
    if (rc)
        return rc;
    glue_builtin(&b, op, &ts);
    return codegen_end(&b, c, src, e);
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
    return codegen_finish(&b, file, emb->text, src, e);
}
