/*
 * axisdata.h - reductions along an axis (docs/axis.md) as the tuner sees them: shapes
 * [outer, len, inner] as text ("1048576x16x1", the layout "axis:1048576x16x1"), the CPU
 * reference of every output and the check of a GPU result against it.
 *
 * out[o * inner + i] is the reduction of in[(o * len + l) * inner + i] over l = 0..len-1, in
 * order; each output's reference is data.c's (data_reference with n = len, so tolerances are
 * those of a flat reduction of len elements) of that output's elements gathered in order, so
 * argmin/argmax give the position l along the axis.
 */
#ifndef RT_AXISDATA_H
#define RT_AXISDATA_H

#include <stddef.h>
#include <stdint.h>
#include "../include/redtune.h"
#include "segdata.h"

typedef struct axis_shape {
    unsigned long long outer, len, inner;
} axis_shape;

/* "OxLxI" or "O,L,I" (three positive integers) into *s: 0; -1 when it is not three positive
 * integers; -2 when outer * len * inner does not fit a signed 64-bit integer. */
int axisdata_parse_shape(const char *text, axis_shape *s);

/* "axis:OxLxI", the layout text of the database; axisdata_parse_layout reads it back
 * (0, or -1 / -2 as axisdata_parse_shape, -1 also without the "axis:" prefix). */
void axisdata_layout(const axis_shape *s, char *buf, size_t len);
int axisdata_parse_layout(const char *text, axis_shape *s);

/* The default shapes of `redtune --axis` (docs/axis.md): rows 1048576x16x1, 65536x128x1,
 * 4096x4096x1, 16x4194304x1, 32768x1024x1; columns 1x1048576x16, 1x65536x128, 1x4096x4096,
 * 1x16x4194304, 1x32768x1024; 3-D 64x2048x512. Up to 'max' into out; the count. */
int axisdata_default_shapes(axis_shape *out, int max);

/* Elements (outer * len * inner) and outputs (outer * inner); the shape must be valid. */
unsigned long long axisdata_n(const axis_shape *s);
unsigned long long axisdata_outputs(const axis_shape *s);

/* References of every output of 'vals' (outer * len * inner elements of 'type'): *refs
 * malloc'd, outer * inner entries (at least one), on 'threads' threads. RT_OK or RT_ENOMEM. */
int axisdata_reference(const void *vals, rt_type type, rt_op op, const axis_shape *s,
                       seg_ref **refs, int threads);

/* Check the outer * inner results 'got' (optype_res_size each) against the references: 1
 * when all match, else 0 and 'why' names the first wrong output (o, i), the shape and both
 * values. */
int axisdata_check(const void *got, const seg_ref *refs, rt_type type, rt_op op,
                   const axis_shape *s, char *why, size_t len);

/* Bytes an axis reduction must move: every element read once, every output written once. */
double axisdata_bytes(const axis_shape *s, size_t esize, size_t res_size);

#endif
