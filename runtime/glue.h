/*
 * glue.h - the prelude's operator glue: what a template calls to reduce, for every built-in
 * operator and type spec (and the pieces a user operator's glue is made of).
 *
 * The glue defines rt_acc_t (the accumulator), rt_res_t (one result), rt_identity(),
 * rt_combine(a, b) (a holds the lower indices), rt_lift(element, index) (the map of an element
 * into the accumulator), rt_shfl_down / rt_shfl_up / rt_shfl (warp shuffles of an
 * accumulator), rt_final(acc) -> rt_res_t (the finalize, applied once where a result is
 * written), and two flags for the templates:
 *   RT_FINAL_IS_IDENTITY  rt_final returns its argument (a pass that would only apply it may
 *                         be skipped);
 *   RT_FINAL_IN_PLACE     rt_res_t is rt_acc_t and a finalized value may be combined again
 *                         (segmented carries fold into results already written); when 0 the
 *                         segmented kernels write accumulators and rt_seg_final finalizes.
 */
#ifndef RT_GLUE_H
#define RT_GLUE_H

#include "optype.h"
#include "sbuf.h"

/* The glue of built-in 'op' over the resolved spec 'ts'. */
void glue_builtin(sbuf *b, rt_op op, const optype_ts *ts);

/* Pieces of a user operator's glue (its accumulator is its element type). */
void glue_scalar(sbuf *b, const char *ct, const char *ident, const char *body);
void glue_lift_and_shuffle(sbuf *b, const char *canon_nan);
void glue_final_identity(sbuf *b);
/* rt_h2f, rt_b2f, rt_f2h, rt_f2b, rt_d2odd; the word-wise shuffles of a struct accumulator
 * (a size of whole words); the shuffles of a 4- or 8-byte scalar accumulator. */
void glue_conversions(sbuf *b);
void glue_struct_shuffles(sbuf *b);
void glue_scalar_shuffles(sbuf *b);

#endif
