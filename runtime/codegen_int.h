/*
 * codegen_int.h - the unit assembly of codegen.c that codegen_user.c shares.
 */
#ifndef RT_CODEGEN_INT_H
#define RT_CODEGEN_INT_H

#include "codegen.h"
#include "sbuf.h"

/* 'src' upper-cased into dst (at most len bytes with the NUL). */
void codegen_upper(char *dst, const char *src, size_t len);
/* The head of every unit: a comment, the op/type macros, commutativity, the value type; a
 * family that needs a commutative operator refuses one that is not. */
int codegen_begin(sbuf *b, const rt_config *c, const char *opname, int commutes, rt_op op,
                  rt_type t, rt_err *e);
/* The tail: the parameters' macros, the loads' choice, the family's template; *src owns b's
 * text (freed on failure). */
int codegen_end(sbuf *b, const rt_config *c, char **src, rt_err *e);
/* `#line N "file"`, the file name escaped for a string literal. */
void codegen_line_directive(sbuf *b, int line, const char *file);
/* 'text' of 'file' appended with its embedded headers inlined; *src owns b's text. */
int codegen_finish(sbuf *b, const char *file, const char *text, char **src, rt_err *e);

#endif
