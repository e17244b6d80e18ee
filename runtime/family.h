/*
 * family.h - the template families. Each templates/<name>.cu is embedded into the binary at
 * build time; its header comment declares the family (see docs/templates.md):
 *
 *   // @family      gridstride
 *   // @summary     one line saying what the kernel does
 *   // @plan        multipass | onelaunch | segmented | axis
 *   // @layout      keys offsets   (segmented families only: the layouts they implement)
 *   // @balanced    yes | no       (segmented families only: yes when a thread's work is
 *                                  bounded whatever the segment lengths, no when a group of
 *                                  threads walks a whole segment: a long one costs its length)
 *   // @commutative required | not-required
 *   // @deterministic yes | no
 *   // @param B 256 threads per block
 */
#ifndef RT_FAMILY_H
#define RT_FAMILY_H

#include "err.h"

#define RT_MAX_PARAMS 16
#define RT_NAME_MAX 48

typedef enum { PLAN_MULTIPASS = 0, PLAN_ONELAUNCH = 1, PLAN_SEGMENTED = 2, PLAN_AXIS = 3 } rt_plan_kind;

/* Bits of rt_family.layouts: the segmented layouts a family implements (docs/segmented.md). */
#define FAMILY_LAYOUT_KEYS 1
#define FAMILY_LAYOUT_OFFSETS 2

typedef struct rt_param_decl {
    char name[RT_NAME_MAX];
    long long def;
    char doc[160];
} rt_param_decl;

typedef struct rt_family {
    char name[RT_NAME_MAX];
    char file[96];                 /* "templates/gridstride.cu" */
    char summary[200];
    rt_plan_kind plan;
    int needs_commutative;
    int deterministic;
    int layouts;                   /* FAMILY_LAYOUT_* bits; 0 for unsegmented families */
    int balanced;                  /* segmented: 1 load-balanced, 0 a group per segment; else -1 */
    long long max_n;               /* @max_n: the largest n the tuner times it at; 0: any */
    int bounds;                    /* @bounds yes: a onelaunch kernel that can read its range
                                    * [offsets[0], offsets[1]) on the GPU (RT_BOUNDS) */
    int nparams;
    rt_param_decl params[RT_MAX_PARAMS];
    const char *text;              /* the template source, NUL-terminated */
} rt_family;

/* The embedded families, parsed once (thread-safe). family_count() is 0 and family_error()
 * says why when a template's header is malformed: a build error, caught by the tests. */
int family_count(void);
const rt_family *family_at(int i);
const rt_family *family_find(const char *name);   /* NULL when unknown */

/* 1 when segments whose longest is 'longest' elements, of n in nseg, spread so widely that
 * only @balanced families should serve them (RT_SEG_SKEWED): the longest over 256 elements
 * and 16 times the mean n / nseg. RT_SEG_CHECK's kernel and `redtune reduce` apply it. */
int family_seg_skewed(unsigned long long longest, unsigned long long n, unsigned long long nseg);
const char *family_error(void);                  /* NULL when all parsed */

const char *family_plan_name(rt_plan_kind p);

/* One point of a search space: a family and a value for each of its parameters (in the
 * family's declaration order; parameters not set take their defaults). */
typedef struct rt_config {
    const rt_family *family;
    long long values[RT_MAX_PARAMS];
    int bounds;   /* not a parameter: RT_BOUNDS for a @bounds family (1: 32-bit, 2: 64-bit
                   * offsets; docs/segmented.md, "One segment"); 0 (the default) for every
                   * other use */
} rt_config;

/* A config with every parameter at its default. */
void config_default(const rt_family *f, rt_config *c);

/* Set a parameter by name; RT_EINVAL naming the family and its parameters when unknown. */
int config_set(rt_config *c, const char *name, long long value, rt_err *e);

/* "B=256 V=4 U=8 G=4" (every parameter, declaration order) into buf. */
void config_format(const rt_config *c, char *buf, size_t len);

/* The inverse: a config of family f from a stored "NAME=V ..." string (NULL: the defaults);
 * parameters it does not name keep their defaults, words without '=' are skipped, an unknown
 * name is config_set's RT_EINVAL. */
int config_parse(const rt_family *f, const char *params, rt_config *c, rt_err *e);

#endif
