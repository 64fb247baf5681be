/* qaudit diff's model: the sites of two runs matched by the functions of their frames, summed
 * where several sites of one run read the same, and ranked by the change of one figure. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports_content.h"
#include "reports/diff.h"

const char *const diff_figure_names[DIFF_FIGURES] = {"allocs", "bytes", "live", "temporary"};

bool diff_figure_parse(const char *name, enum diff_figure *out)
{
    for (int f = 0; f < DIFF_FIGURES; f++)
        if (strcmp(name, diff_figure_names[f]) == 0) {
            *out = (enum diff_figure)f;
            return true;
        }
    return false;
}

/* A frame as it matches across builds: its functions, innermost first ("a<b" when a was inlined
 * into b), or module+offset without symbols (matches within one build only). */
static void frame_key(FILE *out, const struct report *r, const struct report_frame *f)
{
    bool named = false;
    for (size_t i = 0; i < f->location_count; i++)
        if (f->locations[i].function != NULL) {
            fprintf(out, "%s%s", named ? "<" : "", f->locations[i].function);
            named = true;
        }
    if (named)
        return;
    const char *path = f->module != REPORT_NO_MODULE ? r->modules[f->module].path : "?";
    const char *base = strrchr(path, '/');
    fprintf(out, "%s+0x%llx", base ? base + 1 : path, (unsigned long long)f->offset);
}

char *report_site_key(const struct report *r, const struct report_site *s)
{
    char *key = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&key, &size);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < s->stack.frame_count; i++) {
        fputs(i ? ";" : "", out);
        frame_key(out, r, &s->stack.frames[i]);
    }
    fclose(out);
    return key;
}

struct entry {
    char *key;
    enum diff_side side;
    const struct report_site *site;
};

static int by_key(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (int)x->side - (int)y->side;
}

static void add_site(struct diff_site *d, enum diff_side side, const struct report *r,
                     const struct report_site *s)
{
    if (d->site[side] == NULL)
        d->site[side] = s;
    d->value[side][DIFF_ALLOCS] += s->est.allocs;
    d->value[side][DIFF_BYTES] += s->est.bytes;
    d->value[side][DIFF_LIVE] += s->est.live_bytes;
    d->value[side][DIFF_TEMPORARY] += r->temporary_missing ? 0 : s->est.temporary;
    d->live_blocks[side] += s->est.live_blocks;
    d->estimated[side] = d->estimated[side] || s->estimated;
}

/* Largest change of the sort figure first, then of bytes, of allocations; then by key. */
static int by_change(const void *a, const void *b, void *context)
{
    const struct diff_site *x = a, *y = b;
    const enum diff_figure sort = *(const enum diff_figure *)context;
    const enum diff_figure order[] = {sort, DIFF_BYTES, DIFF_ALLOCS, DIFF_LIVE};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        double cx = fabs(x->value[DIFF_NEW][order[i]] - x->value[DIFF_BASE][order[i]]);
        double cy = fabs(y->value[DIFF_NEW][order[i]] - y->value[DIFF_BASE][order[i]]);
        if (cx != cy)
            return cx > cy ? -1 : 1;
    }
    return strcmp(x->key, y->key);
}

static bool differs(const struct diff_site *d)
{
    for (int f = 0; f < DIFF_FIGURES; f++)
        if (fabs(d->value[DIFF_NEW][f] - d->value[DIFF_BASE][f]) >= 0.5)
            return true;
    return false;
}

/* Every site of both runs as (key, side), sorted so that a key's sites are together. */
static struct entry *collect(const struct report *base, const struct report *new_run, size_t *count)
{
    const struct report *runs[2] = {base, new_run};
    *count = base->site_count + new_run->site_count;
    struct entry *entries = calloc(*count + 1, sizeof *entries);
    size_t n = 0;
    for (int side = 0; entries && side < 2; side++)
        for (size_t i = 0; i < runs[side]->site_count; i++) {
            const struct report_site *s = &runs[side]->sites[i];
            entries[n] = (struct entry){report_site_key(runs[side], s), (enum diff_side)side, s};
            if (entries[n++].key == NULL) {
                *count = n;
                return entries;
            }
        }
    if (entries != NULL)
        qsort(entries, n, sizeof *entries, by_key);
    return entries;
}

bool report_diff(const struct report *base, const struct report *new_run, enum diff_figure sort,
                 struct report_diff *out)
{
    *out = (struct report_diff){.run = {base, new_run}, .sort = sort};
    size_t n;
    struct entry *entries = collect(base, new_run, &n);
    bool ok = entries != NULL && (out->sites = calloc(n + 1, sizeof *out->sites)) != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        ok = entries[i].key != NULL;
        if (!ok)
            break;
        bool same = out->count > 0 && strcmp(out->sites[out->count - 1].key, entries[i].key) == 0;
        struct diff_site *d = same ? &out->sites[out->count - 1] : &out->sites[out->count++];
        if (!same)
            d->key = strdup(entries[i].key);
        add_site(d, entries[i].side, out->run[entries[i].side], entries[i].site);
    }
    for (size_t i = 0; entries && i < n; i++)
        free(entries[i].key);
    free(entries);
    if (!ok) {
        report_diff_free(out);
        return false;
    }
    qsort_r(out->sites, out->count, sizeof *out->sites, by_change, &sort);
    for (size_t i = 0; i < out->count; i++)
        out->changed += differs(&out->sites[i]);
    return true;
}

void report_diff_free(struct report_diff *d)
{
    for (size_t i = 0; i < d->count; i++)
        free(d->sites[i].key);
    free(d->sites);
    *d = (struct report_diff){0};
}
