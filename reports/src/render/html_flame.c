/* The HTML page's flame graph: every site's stack walked root first as the folded views walk it
 * (flame_stacks.c: symbolized, inlined calls expanded, wrappers folded), merged into a tree by
 * function name under each caller, each node with its allocations, bytes allocated and bytes live
 * at the dump. The tree goes to the page once, as compact JSON the inline script draws on a canvas.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_render.h"
#include "common/xml_escape.h"

#define NONE UINT32_MAX
enum { FLAG_ESTIMATED = 1, FLAG_LINES = 2, FLAG_INLINED = 4 };

struct flame_node {
    uint32_t parent, name, depth;
    uint32_t loc; /* "file:line" among the tree's locs, named once the kept nodes are known */
    const struct report_location *where; /* the first source line seen, NULL for none */
    unsigned flags;
    double v[3]; /* enum report_weight */
};

/* Interned strings (names, "file:line"), found through an open-addressing index. */
struct strings {
    char **items;
    size_t count, capacity; /* items allocated: half the slots (common/grow_array.h) */
    uint32_t *slots;        /* item index, NONE when empty */
    size_t slot_count;
};

struct tree {
    struct flame_node *nodes;
    size_t count, capacity; /* nodes allocated: half the slots (common/grow_array.h) */
    uint32_t *slots;        /* (parent, name) -> node index, NONE when empty */
    size_t slot_count;
    struct strings names, locs;
    bool failed;
};

static uint64_t hash_text(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t hash_pair(uint32_t parent, uint32_t name)
{
    uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static uint32_t *new_slots(size_t n)
{
    uint32_t *slots = malloc(n * sizeof *slots);
    if (slots != NULL)
        memset(slots, 0xff, n * sizeof *slots);
    return slots;
}

static bool strings_grow(struct strings *s)
{
    size_t n = s->slot_count ? 2 * s->slot_count : 256;
    uint32_t *slots = new_slots(n);
    if (slots == NULL || !array_reserve(&s->items, &s->capacity, n / 2, sizeof *s->items)) {
        free(slots);
        return false;
    }
    for (size_t i = 0; i < s->count; i++) {
        size_t k = hash_text(s->items[i]) & (n - 1);
        while (slots[k] != NONE)
            k = (k + 1) & (n - 1);
        slots[k] = (uint32_t)i;
    }
    free(s->slots);
    s->slots = slots;
    s->slot_count = n;
    return true;
}

static uint32_t intern(struct strings *s, const char *text)
{
    if (2 * (s->count + 1) > s->slot_count && !strings_grow(s))
        return NONE;
    size_t k = hash_text(text) & (s->slot_count - 1);
    while (s->slots[k] != NONE && strcmp(s->items[s->slots[k]], text) != 0)
        k = (k + 1) & (s->slot_count - 1);
    if (s->slots[k] == NONE) {
        char *copy = strdup(text);
        if (copy == NULL)
            return NONE;
        s->items[s->count] = copy;
        s->slots[k] = (uint32_t)s->count++;
    }
    return s->slots[k];
}

static void strings_free(struct strings *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->items[i]);
    free(s->items);
    free(s->slots);
}

static bool tree_grow(struct tree *t)
{
    size_t n = t->slot_count ? 2 * t->slot_count : 1024;
    uint32_t *slots = new_slots(n);
    if (slots == NULL || !array_reserve(&t->nodes, &t->capacity, n / 2, sizeof *t->nodes)) {
        free(slots);
        return false;
    }
    for (size_t i = 1; i < t->count; i++) { /* the root (0) is nobody's child */
        size_t k = hash_pair(t->nodes[i].parent, t->nodes[i].name) & (n - 1);
        while (slots[k] != NONE)
            k = (k + 1) & (n - 1);
        slots[k] = (uint32_t)i;
    }
    free(t->slots);
    t->slots = slots;
    t->slot_count = n;
    return true;
}

static uint32_t add_node(struct tree *t, uint32_t parent, uint32_t name,
                         const struct report_location *where)
{
    struct flame_node *n = &t->nodes[t->count];
    *n = (struct flame_node){.parent = parent, .name = name, .loc = NONE, .where = where};
    n->depth = parent == NONE ? 0 : t->nodes[parent].depth + 1;
    return (uint32_t)t->count++;
}

/* Whether two levels read as the same "file:line" (NULL: no line). */
static bool same_line(const struct report_location *a, const struct report_location *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return a->line == b->line &&
           (a->file == b->file ||
            strcmp(report_path_base_name(a->file), report_path_base_name(b->file)) == 0);
}

/* The child of parent named name, made when new; a second source line for it is flagged. */
static uint32_t child(struct tree *t, uint32_t parent, uint32_t name,
                      const struct report_location *where)
{
    if (2 * (t->count + 1) > t->slot_count && !tree_grow(t)) {
        t->failed = true;
        return parent;
    }
    size_t k = hash_pair(parent, name) & (t->slot_count - 1);
    while (t->slots[k] != NONE &&
           (t->nodes[t->slots[k]].parent != parent || t->nodes[t->slots[k]].name != name))
        k = (k + 1) & (t->slot_count - 1);
    if (t->slots[k] == NONE) {
        t->slots[k] = add_node(t, parent, name, where);
        return t->slots[k];
    }
    struct flame_node *n = &t->nodes[t->slots[k]];
    if (!same_line(n->where, where))
        n->flags |= FLAG_LINES;
    return t->slots[k];
}

static void add_weights(struct flame_node *n, const double w[3], unsigned flags)
{
    for (int i = 0; i < 3; i++)
        n->v[i] += w[i];
    n->flags |= flags;
}

struct walk {
    const struct report *r;
    struct tree *t;
    uint32_t at;
    double w[3];
    unsigned flags;
};

/* A level's name as report_stack_level_name gives it, without copying a known function's name: the
 * walk visits every level of every site. */
static const char *level_name(const struct report *r, const struct report_frame *f, size_t location,
                              char *buf, size_t size)
{
    if (location < f->location_count && f->locations[location].function != NULL)
        return f->locations[location].function;
    return report_stack_level_name(r, f, location, buf, size);
}

static void visit(void *context, const struct report_frame *f, size_t location)
{
    struct walk *k = context;
    char buf[1024];
    const struct report_location *where = NULL;
    unsigned flags = k->flags;
    if (location < f->location_count) {
        const struct report_location *l = &f->locations[location];
        where = l->file != NULL ? l : NULL;
        flags |= l->inlined ? FLAG_INLINED : 0;
    }
    uint32_t id = intern(&k->t->names, level_name(k->r, f, location, buf, sizeof buf));
    if (id == NONE) {
        k->t->failed = true;
        return;
    }
    k->at = child(k->t, k->at, id, where);
    add_weights(&k->t->nodes[k->at], k->w, flags);
}

static void build(struct tree *t, const struct report *r)
{
    if (!tree_grow(t)) {
        t->failed = true;
        return;
    }
    add_node(t, NONE, intern(&t->names, "all"), NULL);
    uint32_t no_stack = intern(&t->names, "(no stack)");
    for (size_t i = 0; i < r->site_count && !t->failed; i++) {
        const struct report_site *s = &r->sites[i];
        struct walk k = {r, t, 0, {0}, s->estimated ? FLAG_ESTIMATED : 0};
        for (int w = 0; w < 3; w++)
            k.w[w] = report_site_weight(s, (enum report_weight)w);
        if (k.w[0] <= 0 && k.w[1] <= 0 && k.w[2] <= 0)
            continue;
        add_weights(&t->nodes[0], k.w, k.flags);
        report_stack_walk_root_first(r, &s->stack, visit, &k);
        if (s->stack.frame_count == 0 && !t->failed) {
            k.at = child(t, 0, no_stack, NULL);
            add_weights(&t->nodes[k.at], k.w, k.flags);
        }
    }
}

/* A node's largest share of the root over the three weights: what decides whether it is kept. */
static double node_share(const struct tree *t, uint32_t i)
{
    double best = 0;
    for (int w = 0; w < 3; w++)
        if (t->nodes[0].v[w] > 0 && t->nodes[i].v[w] / t->nodes[0].v[w] > best)
            best = t->nodes[i].v[w] / t->nodes[0].v[w];
    return best;
}

/* The k-th largest of a[0..n) (k from 0), reordering a: quickselect, linear on average. */
static double kth_largest(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pivot)
                i++;
            while (a[j] < pivot)
                j--;
            if (i <= j) {
                double swap = a[i];
                a[i++] = a[j];
                a[j] = swap;
                if (j-- == 0)
                    break;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

/* Which nodes go to the page: all, or the HTML_FLAME_NODES largest by their largest share of a
 * weight, ties in the order made (a parent outweighs its children, so the kept nodes are a
 * tree). Returns how many were left out. */
static size_t mark_kept(const struct tree *t, bool *kept)
{
    for (size_t i = 0; i < t->count; i++)
        kept[i] = true;
    if (t->count <= HTML_FLAME_NODES)
        return 0;
    double *share = malloc(t->count * sizeof *share), *scratch = malloc(t->count * sizeof *share);
    if (share != NULL && scratch != NULL) {
        for (size_t i = 0; i < t->count; i++)
            scratch[i] = share[i] = node_share(t, (uint32_t)i);
        double least = kth_largest(scratch, t->count, HTML_FLAME_NODES - 1);
        size_t above = 0;
        for (size_t i = 0; i < t->count; i++)
            above += share[i] > least;
        for (size_t i = 0, ties = HTML_FLAME_NODES - above; i < t->count; i++) {
            kept[i] = share[i] > least || (share[i] == least && ties > 0);
            ties -= share[i] == least && ties > 0;
        }
    }
    free(share);
    free(scratch);
    size_t left_out = 0;
    for (size_t i = 1; i < t->count; i++) { /* a parent is always made before its children */
        kept[i] = kept[i] && kept[t->nodes[i].parent];
        left_out += !kept[i];
    }
    return left_out;
}

/* "file:line" of the kept nodes, into the tree's locs. */
static void name_lines(struct tree *t, const bool *kept)
{
    char text[1024];
    for (size_t i = 0; i < t->count; i++) {
        const struct report_location *l = t->nodes[i].where;
        if (!kept[i] || l == NULL)
            continue;
        snprintf(text, sizeof text, "%s:%u", report_path_base_name(l->file), l->line);
        t->nodes[i].loc = intern(&t->locs, text);
    }
}

struct children {
    uint32_t *first; /* children of node i: list[first[i] .. first[i + 1]) */
    uint32_t *list;
};

static const struct tree *sort_tree;

static int by_name(const void *a, const void *b)
{
    const struct flame_node *x = &sort_tree->nodes[*(const uint32_t *)a];
    const struct flame_node *y = &sort_tree->nodes[*(const uint32_t *)b];
    return strcmp(sort_tree->names.items[x->name], sort_tree->names.items[y->name]);
}

/* The kept children of every node, in the order of their names (as flamegraph.pl draws them). */
static bool children_of(const struct tree *t, const bool *kept, struct children *c)
{
    c->first = calloc(t->count + 2, sizeof *c->first);
    c->list = malloc((t->count + 1) * sizeof *c->list);
    if (c->first == NULL || c->list == NULL)
        return false;
    for (size_t i = 1; i < t->count; i++)
        if (kept[i])
            c->first[t->nodes[i].parent + 2]++;
    for (size_t i = 2; i < t->count + 2; i++)
        c->first[i] += c->first[i - 1];
    for (size_t i = 1; i < t->count; i++)
        if (kept[i])
            c->list[c->first[t->nodes[i].parent + 1]++] = (uint32_t)i;
    sort_tree = t;
    for (size_t i = 0; i < t->count; i++)
        qsort(c->list + c->first[i], c->first[i + 1] - c->first[i], sizeof *c->list, by_name);
    return true;
}

/* s as a JSON string, with <, > and & escaped too: safe inside <script> and in XML. */
static void json_text(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* The page's strings; names shortened as the text report shortens C++ names (cxx_short_names.c)
 * unless shorten is false: the tree is merged on the full names, so two instantiations that shorten
 * alike stay two boxes with their own figures. */
static void print_strings(FILE *out, const struct strings *s, const uint32_t *order, size_t n,
                          bool shorten)
{
    char buf[1024];
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", out);
        const char *text = s->items[order[i]];
        json_text(out, shorten ? report_short_name(text, buf, sizeof buf) : text);
    }
}

/* An index in the page's own string list: strings are numbered as nodes first use them. */
static long renumber(uint32_t id, uint32_t *map, uint32_t *order, size_t *n)
{
    if (id == NONE)
        return -1;
    if (map[id] == NONE) {
        map[id] = (uint32_t)*n;
        order[(*n)++] = id;
    }
    return map[id];
}

struct page_strings {
    uint32_t *map, *order;
    size_t count;
};

static void print_node(FILE *out, const struct tree *t, uint32_t i, struct page_strings *names,
                       struct page_strings *locs)
{
    const struct flame_node *n = &t->nodes[i];
    fprintf(out, "%s%" PRIu32 ",%ld,%ld,%u,%.0f,%.0f,%.0f", i ? "," : "", n->depth,
            renumber(n->name, names->map, names->order, &names->count),
            renumber(n->loc, locs->map, locs->order, &locs->count), n->flags, round(n->v[0]),
            round(n->v[1]), round(n->v[2]));
}

/* The kept nodes in depth-first order, 7 numbers each: depth, name, loc (-1: none), flags (1 an
 * estimate, 2 several source lines, 4 inlined), allocations, bytes, live bytes. */
static void print_nodes(FILE *out, const struct tree *t, const struct children *c,
                        struct page_strings *names, struct page_strings *locs)
{
    uint32_t *stack = malloc((t->count + 1) * sizeof *stack);
    size_t top = 0;
    if (stack == NULL)
        return;
    stack[top++] = 0;
    while (top > 0) {
        uint32_t i = stack[--top];
        print_node(out, t, i, names, locs);
        for (uint32_t k = c->first[i + 1]; k-- > c->first[i];)
            stack[top++] = c->list[k];
    }
    free(stack);
}

static bool page_strings_init(struct page_strings *p, size_t n)
{
    p->map = malloc((n + 1) * sizeof *p->map);
    p->order = malloc((n + 1) * sizeof *p->order);
    p->count = 0;
    if (p->map != NULL)
        memset(p->map, 0xff, (n + 1) * sizeof *p->map);
    return p->map != NULL && p->order != NULL;
}

static void print_data(FILE *out, const struct tree *t, const struct children *c, size_t left_out,
                       const char *live_label, bool long_names)
{
    struct page_strings names = {0}, locs = {0};
    if (page_strings_init(&names, t->names.count) && page_strings_init(&locs, t->locs.count)) {
        fputs("<script type=\"application/json\" id=\"flame-data\">{\"nodes\":[", out);
        print_nodes(out, t, c, &names, &locs);
        fputs("],\"names\":[", out);
        print_strings(out, &t->names, names.order, names.count, !long_names);
        fputs("],\"locs\":[", out);
        print_strings(out, &t->locs, locs.order, locs.count, false);
        fprintf(out, "],\"left_out\":%zu,\"weights\":[\"allocations\",\"bytes allocated\",",
                left_out);
        json_text(out, live_label);
        fputs("]}</script>\n", out);
    }
    free(names.map);
    free(names.order);
    free(locs.map);
    free(locs.order);
}

static void print_controls(FILE *out, const struct tree *t, const char *live_label)
{
    static const char *const labels[] = {"allocations", "bytes allocated"};
    int chosen = 0;
    while (chosen < 2 && t->nodes[0].v[chosen] <= 0)
        chosen++;
    fputs("<div class=\"flame\" id=\"flame\">\n<div class=\"flame-bar\"><span class=\"weights\" "
          "role=\"radiogroup\" aria-label=\"weight\">",
          out);
    for (int w = 0; w < 3; w++) {
        fprintf(out, "<label><input type=\"radio\" name=\"flame-weight\" value=\"%d\"%s/> ", w,
                w == chosen ? " checked=\"checked\"" : "");
        xml_escape(out, w < 2 ? labels[w] : live_label);
        fputs("</label> ", out);
    }
    fputs("</span><input type=\"search\" id=\"flame-search\" placeholder=\"search functions\" "
          "aria-label=\"search functions\"/><button type=\"button\" id=\"flame-reset\">reset "
          "zoom</button></div>\n<p class=\"flame-status\" id=\"flame-status\">The flame graph "
          "needs JavaScript.</p>\n<div class=\"flame-box\"><canvas id=\"flame-canvas\" "
          "role=\"img\" aria-label=\"flame graph of the allocation sites\"></canvas><div "
          "class=\"flame-tip\" id=\"flame-tip\" hidden=\"hidden\"></div></div>\n",
          out);
}

static const char *live_label_of(const struct report *r)
{
    static const char *const labels[] = {"bytes live at exit", "bytes live now",
                                         "bytes live at exit or the last snapshot",
                                         "bytes live at the detach"};
    return labels[report_live_scope(r)];
}

static void print_note(FILE *out, size_t left_out)
{
    fputs("<p class=\"note\">Each row is a call level, callers above the functions they call; a "
          "frame's width is its share of the chosen weight (the line above gives the full "
          "width). Click a frame to zoom in, the top row to zoom out; the search marks matching "
          "frames in purple; colours only tell frames apart. '~': estimated from sampled stacks.",
          out);
    if (left_out > 0)
        fprintf(out,
                " %zu of the smallest frames are left out to keep the page small (--format "
                "folded has every stack).",
                left_out);
    fputs("</p>\n", out);
}

void report_html_flame(FILE *out, const struct report *r, bool long_names)
{
    struct tree t = {0};
    build(&t, r);
    bool *kept = t.failed ? NULL : calloc(t.count + 1, sizeof *kept);
    struct children c = {0};
    if (kept != NULL) {
        size_t left_out = mark_kept(&t, kept);
        name_lines(&t, kept);
        if (children_of(&t, kept, &c)) {
            const char *live = live_label_of(r);
            print_controls(out, &t, live);
            print_note(out, left_out);
            print_data(out, &t, &c, left_out, live, long_names);
            fputs("</div>\n", out);
        }
    }
    free(c.first);
    free(c.list);
    free(kept);
    free(t.nodes);
    free(t.slots);
    strings_free(&t.names);
    strings_free(&t.locs);
}
