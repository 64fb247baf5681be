/* Folded stacks (`--format folded`): one line per distinct stack, its frames root first joined by
 * ';', a space and its count, the input of flamegraph.pl, speedscope and Pyroscope's "folded"
 * ingestion. Frames are those of the pprof profile (flame_stacks.c); the count is a site's
 * allocations, bytes or live bytes (--weight), estimates for sampled sites, rounded. Lines come
 * sorted, and sites whose stacks read the same (two return addresses in one function) are one line.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_render.h"

struct folded_line {
    char *stack;
    long long count;
};

/* A growing string: the frames of one stack. */
struct line_buffer {
    char *text;
    size_t length, capacity;
    const struct report *report;
};

static void append(struct line_buffer *b, const char *s, size_t n)
{
    if (!array_reserve(&b->text, &b->capacity, b->length + n + 2, 1))
        return;
    memcpy(b->text + b->length, s, n);
    b->length += n;
    b->text[b->length] = '\0';
}

/* One level, after a ';' unless it is the first; ';' and line breaks in a name would split it. */
static void append_level(void *context, const struct report_frame *f, size_t location)
{
    struct line_buffer *b = context;
    char name[1024];
    report_stack_level_name(b->report, f, location, name, sizeof name);
    for (char *c = name; *c; c++)
        if (*c == ';' || *c == '\n' || *c == '\r')
            *c = ':';
    if (b->length > 0)
        append(b, ";", 1);
    append(b, name, strlen(name));
}

static int by_stack(const void *a, const void *b)
{
    return strcmp(((const struct folded_line *)a)->stack, ((const struct folded_line *)b)->stack);
}

/* The lines of every site with a count above 0, unsorted; their number in *count. */
static struct folded_line *site_lines(const struct report *r, enum report_weight weight,
                                      size_t *count)
{
    struct folded_line *lines = calloc(r->site_count + 1, sizeof *lines);
    *count = 0;
    for (size_t i = 0; lines && i < r->site_count; i++) {
        const struct report_site *s = &r->sites[i];
        long long n = llround(report_site_weight(s, weight));
        if (n <= 0)
            continue;
        struct line_buffer b = {NULL, 0, 0, r};
        report_stack_walk_root_first(r, &s->stack, append_level, &b);
        if (b.length == 0)
            append(&b, "(no stack)", strlen("(no stack)"));
        if (b.text == NULL)
            continue;
        lines[(*count)++] = (struct folded_line){b.text, n};
    }
    return lines;
}

void report_render_folded(FILE *out, const struct report *r, enum report_weight weight)
{
    size_t count;
    struct folded_line *lines = site_lines(r, weight, &count);
    if (lines == NULL)
        return;
    qsort(lines, count, sizeof *lines, by_stack);
    for (size_t i = 0; i < count;) {
        long long total = 0;
        size_t j = i;
        for (; j < count && strcmp(lines[j].stack, lines[i].stack) == 0; j++)
            total += lines[j].count;
        fprintf(out, "%s %lld\n", lines[i].stack, total);
        i = j;
    }
    for (size_t i = 0; i < count; i++)
        free(lines[i].stack);
    free(lines);
}
