/*
 * family.c - the template families: parse the header comments of the embedded templates.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "embed.h"
#include "family.h"

#define MAX_FAMILIES 32

static rt_family families[MAX_FAMILIES];
static int nfamilies;
static char parse_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Copy the value after "// @key" up to the end of the line, trimmed. */
static void line_value(const char *p, const char *eol, char *buf, size_t len)
{
    while (p < eol && (*p == ' ' || *p == '\t'))
        p++;
    while (eol > p && (eol[-1] == ' ' || eol[-1] == '\t' || eol[-1] == '\r'))
        eol--;
    size_t n = (size_t)(eol - p);
    if (n >= len)
        n = len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

static int parse_param(rt_family *f, const char *v)
{
    if (f->nparams == RT_MAX_PARAMS)
        return -1;
    rt_param_decl *d = &f->params[f->nparams];
    char *end;
    int n = 0;
    if (sscanf(v, "%47s %n", d->name, &n) != 1 || n == 0)
        return -1;
    d->def = strtoll(v + n, &end, 10);
    if (end == v + n)
        return -1;
    while (*end == ' ')
        end++;
    snprintf(d->doc, sizeof d->doc, "%s", end);
    for (const char *c = d->name; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return -1;
    f->nparams++;
    return 0;
}

/* "@layout keys offsets": the segmented layouts a family implements. */
static int parse_layouts(rt_family *f, const char *v)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    int any = 0;
    for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (strcmp(w, "keys") == 0)
            f->layouts |= FAMILY_LAYOUT_KEYS;
        else if (strcmp(w, "offsets") == 0)
            f->layouts |= FAMILY_LAYOUT_OFFSETS;
        else
            return -1;
        any = 1;
    }
    return any ? 0 : -1;
}

/* Parse one template's header; 0 when it declares no family (a helper file), 1 when it does,
 * -1 on a malformed header (parse_error says where). */
static int parse_family(const rt_embedded *emb, rt_family *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->file, sizeof f->file, "%s", emb->path);
    f->text = emb->text;
    f->plan = -1;
    f->needs_commutative = -1;
    f->deterministic = -1;
    f->balanced = -1;
    int line = 0;
    for (const char *p = emb->text; *p; ) {
        const char *eol = strchr(p, '\n');
        if (!eol)
            eol = p + strlen(p);
        line++;
        if (strncmp(p, "// @", 4) != 0)
            break;   /* the header is the leading block of "// @" lines */
        {
            char key[32], val[256];
            const char *k = p + 4, *ke = k;
            while (ke < eol && *ke != ' ' && *ke != '\t')
                ke++;
            line_value(k, ke, key, sizeof key);
            line_value(ke, eol, val, sizeof val);
            int bad = 0;
            if (strcmp(key, "family") == 0)
                snprintf(f->name, sizeof f->name, "%s", val);
            else if (strcmp(key, "summary") == 0)
                snprintf(f->summary, sizeof f->summary, "%s", val);
            else if (strcmp(key, "plan") == 0)
                f->plan = strcmp(val, "multipass") == 0 ? PLAN_MULTIPASS
                        : strcmp(val, "onelaunch") == 0 ? PLAN_ONELAUNCH
                        : strcmp(val, "segmented") == 0 ? PLAN_SEGMENTED
                        : strcmp(val, "axis") == 0 ? PLAN_AXIS : (bad = 1, -1);
            else if (strcmp(key, "layout") == 0)
                bad = parse_layouts(f, val) != 0;
            else if (strcmp(key, "commutative") == 0)
                f->needs_commutative = strcmp(val, "required") == 0 ? 1
                                     : strcmp(val, "not-required") == 0 ? 0 : (bad = 1, -1);
            else if (strcmp(key, "deterministic") == 0)
                f->deterministic = strcmp(val, "yes") == 0 ? 1
                                 : strcmp(val, "no") == 0 ? 0 : (bad = 1, -1);
            else if (strcmp(key, "bounds") == 0)
                f->bounds = strcmp(val, "yes") == 0 ? 1 : strcmp(val, "no") == 0 ? 0 : (bad = 1, 0);
            else if (strcmp(key, "balanced") == 0)
                f->balanced = strcmp(val, "yes") == 0 ? 1
                            : strcmp(val, "no") == 0 ? 0 : (bad = 1, -1);
            else if (strcmp(key, "param") == 0)
                bad = parse_param(f, val) != 0;
            else if (strcmp(key, "max_n") == 0) {
                char *end;
                f->max_n = strtoll(val, &end, 10);
                bad = end == val || *end || f->max_n < 1;
            }
            else
                bad = 1;
            if (bad) {
                snprintf(parse_error, sizeof parse_error, "%s:%d: bad header line '@%s %s'",
                         emb->path, line, key, val);
                return -1;
            }
        }
        p = *eol ? eol + 1 : eol;
    }
    if (!f->name[0])
        return 0;
    if ((f->plan == PLAN_SEGMENTED) != (f->layouts != 0)) {
        snprintf(parse_error, sizeof parse_error,
                 "%s: family '%s': @layout goes with @plan segmented, and only with it",
                 emb->path, f->name);
        return -1;
    }
    if ((f->plan == PLAN_SEGMENTED) != (f->balanced >= 0)) {
        snprintf(parse_error, sizeof parse_error,
                 "%s: family '%s': @balanced goes with @plan segmented, and it must declare it",
                 emb->path, f->name);
        return -1;
    }
    if ((int)f->plan < 0 || f->needs_commutative < 0 || f->deterministic < 0 || !f->summary[0]) {
        snprintf(parse_error, sizeof parse_error,
                 "%s: family '%s' must declare @summary, @plan, @commutative and @deterministic",
                 emb->path, f->name);
        return -1;
    }
    return 1;
}

static void load_families(void)
{
    for (int i = 0; i < rt_embedded_count; i++) {
        const rt_embedded *emb = &rt_embedded_files[i];
        size_t len = strlen(emb->path);
        if (strncmp(emb->path, "templates/", 10) != 0 || len < 3 || strcmp(emb->path + len - 3, ".cu"))
            continue;
        if (nfamilies == MAX_FAMILIES) {
            snprintf(parse_error, sizeof parse_error, "more than %d template families", MAX_FAMILIES);
            nfamilies = 0;
            return;
        }
        int r = parse_family(emb, &families[nfamilies]);
        if (r < 0) {
            nfamilies = 0;
            return;
        }
        nfamilies += r;
    }
}

int family_count(void)
{
    pthread_once(&once, load_families);
    return nfamilies;
}

const rt_family *family_at(int i)
{
    return i >= 0 && i < family_count() ? &families[i] : NULL;
}

const rt_family *family_find(const char *name)
{
    for (int i = 0; name && i < family_count(); i++)
        if (strcmp(families[i].name, name) == 0)
            return &families[i];
    return NULL;
}

const char *family_error(void)
{
    pthread_once(&once, load_families);
    return parse_error[0] ? parse_error : NULL;
}

const char *family_plan_name(rt_plan_kind p)
{
    return p == PLAN_ONELAUNCH ? "onelaunch" : p == PLAN_SEGMENTED ? "segmented"
         : p == PLAN_AXIS ? "axis" : "multipass";
}

void config_default(const rt_family *f, rt_config *c)
{
    memset(c, 0, sizeof *c);
    c->family = f;
    for (int i = 0; i < f->nparams; i++)
        c->values[i] = f->params[i].def;
}

int config_set(rt_config *c, const char *name, long long value, rt_err *e)
{
    const rt_family *f = c->family;
    for (int i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i].name, name) == 0) {
            c->values[i] = value;
            return RT_OK;
        }
    char names[RT_MAX_PARAMS * (RT_NAME_MAX + 1)] = "";
    for (int i = 0; i < f->nparams; i++) {
        if (i)
            strcat(names, " ");
        strcat(names, f->params[i].name);
    }
    return rt_seterr(e, RT_EINVAL, "family '%s' has no parameter '%s' (parameters: %s)",
                     f->name, name, names);
}

void config_format(const rt_config *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->family->nparams && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s=%lld", i ? " " : "",
                                c->family->params[i].name, c->values[i]);
}

int config_parse(const rt_family *f, const char *params, rt_config *c, rt_err *e)
{
    config_default(f, c);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", params ? params : "");
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        if (!eq)
            continue;
        *eq = '\0';
        int rc = config_set(c, w, atoll(eq + 1), e);
        if (rc)
            return rc;
    }
    return RT_OK;
}

int family_seg_skewed(unsigned long long longest, unsigned long long n, unsigned long long nseg)
{
    return longest > 256 && (double)longest > 16.0 * (double)n / (double)(nseg ? nseg : 1);
}
