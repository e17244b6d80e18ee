/*
 * cli_int.h - the option values of the redtune program's command line (cli_values.c), for
 * cli.c. Each returns RT_OK, or a usage error (RT_EINVAL) whose message names the option as
 * given ('as') and the value, followed by the line that says where to read more.
 */
#ifndef RT_CLI_INT_H
#define RT_CLI_INT_H

#include "cli.h"

/* A usage error: the message, then "(see redtune SEE)". Returns RT_EINVAL. */
int cli_usage(rt_err *e, const char *see, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "1000", "2^20", "4K", "16M", "1G" (binary multiples), 1 .. 2^40: 0, or -1. */
int cli_parse_size(const char *s, long long *out);
/* A decimal integer in [lo, hi]: 0, or -1. */
int cli_parse_int(const char *s, long long lo, long long hi, long long *out);
/* A family by name (unknown: a usage error listing the known ones). */
int cli_find_family(const char *name, const rt_family **f, rt_err *e);
/* --family LIST: a comma-separated list of known families. */
int cli_check_family_list(const char *list, rt_err *e);
/* --sizes LIST (sizes != 0) into a->sizes, or --profiles LIST into a->tune.profiles. */
int cli_parse_list(cli_args *a, int sizes, const char *list, rt_err *e);
/* --shapes LIST: O,L,I or OxLxI shapes separated by ';' into a->tune.shapes. */
int cli_parse_shapes(cli_args *a, const char *as, const char *list, rt_err *e);
/* --arch: sm_XY, X from 5 to 9. */
int cli_check_arch(const char *s, rt_err *e);
/* --budget: N configs, Ns / Nm seconds, P% or P%,N of each case's configs. */
int cli_parse_budget(cli_args *a, const char *as, const char *v, rt_err *e);
/* Tuning's --device: all, or a comma-separated list of distinct GPU ordinals. */
int cli_parse_devices(cli_args *a, const char *as, const char *v, rt_err *e);

#endif
