/* pprof export (`--format pprof`): a gzipped profile.proto heap profile with the sample types of
 * Go's heap profiles (alloc_objects, alloc_space, inuse_objects, inuse_space, the last the
 * default), one sample per site with its figures as the text report gives them (a sampled site's
 * estimates, estimate.c), frames as the folded view walks them (flame_stacks.c): a location per
 * distinct frame, its inlined functions as several lines, innermost first; a mapping per module
 * with its build id (from the dump, else read from the file). The message is built with
 * protobuf-c's generated code (reports/proto/profile.proto) and deflated while it is packed. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_render.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Label Label;

/* Each module's frames are placed in an address range of their own: a report merges processes
 * whose load addresses differ, so a frame keeps its offset in the module's ELF view, at
 * (module + 1) << MODULE_SHIFT. */
#define MODULE_SHIFT 40
#define NO_STACK_MODULE (UINT32_MAX - 1) /* the location of a site without frames */
#define VALUES 4
#define LABELS 3

/* A location and where its lines start in builder.lines (their pointers are made at the end,
 * once the lines no longer move). */
struct built_location {
    Location location;
    size_t first_line;
};

struct builder {
    const struct report *r;
    FILE *warn;
    bool failed; /* memory ran out: nothing is written */
    char **strings;
    size_t string_count, string_capacity;
    struct index string_index, function_index, location_index;
    Function *functions;
    size_t function_count, function_capacity;
    struct built_location *locations;
    size_t location_count, location_capacity;
    Line *lines;
    size_t line_count, line_capacity;
    Mapping *mappings; /* in mapping order, the main program's first */
    size_t mapping_count;
    uint32_t *mapping_of;    /* report module -> index in mappings */
    uint64_t *module_extent; /* report module -> its highest frame offset + 1, 0: unused */
    int64_t *comments;
    size_t comment_count, comment_capacity;
};

static int64_t string_id(struct builder *b, const char *s)
{
    if (s == NULL || s[0] == '\0')
        return 0;
    uint64_t hash = report_index_hash_string(s);
    struct slot *slot = report_index_find(&b->string_index, hash, 0, 0, 0, s);
    if (slot == NULL) {
        b->failed = true;
        return 0;
    }
    if (slot->used)
        return (int64_t)slot->value;
    char **entry = array_push(&b->strings, &b->string_count, &b->string_capacity, sizeof *entry);
    if (entry == NULL || (*entry = strdup(s)) == NULL) {
        b->failed = true;
        return 0;
    }
    report_index_fill(&b->string_index, slot, hash, 0, 0, 0, *entry, b->string_count - 1);
    return (int64_t)(b->string_count - 1);
}

/* A function by name and source file. Its system name is its name: reports keep the demangled
 * name only. */
static uint64_t function_id(struct builder *b, const char *name, const char *file)
{
    int64_t n = string_id(b, name), f = string_id(b, file);
    uint64_t hash = report_index_mix(report_index_mix(7, (uint64_t)n), (uint64_t)f);
    struct slot *slot =
        report_index_find(&b->function_index, hash, (uint64_t)n, (uint64_t)f, 0, NULL);
    if (slot == NULL || slot->used) {
        b->failed |= slot == NULL;
        return slot ? slot->value : 0;
    }
    Function *fn = array_push(&b->functions, &b->function_count, &b->function_capacity, sizeof *fn);
    if (fn == NULL) {
        b->failed = true;
        return 0;
    }
    perftools__profiles__function__init(fn);
    fn->id = b->function_count;
    fn->name = fn->system_name = n;
    fn->filename = f;
    report_index_fill(&b->function_index, slot, hash, (uint64_t)n, (uint64_t)f, 0, NULL, fn->id);
    return fn->id;
}

static void add_line(struct builder *b, const char *function, const char *file, unsigned line)
{
    uint64_t id = function_id(b, function, file);
    Line *l = array_push(&b->lines, &b->line_count, &b->line_capacity, sizeof *l);
    if (l == NULL) {
        b->failed = true;
        return;
    }
    perftools__profiles__line__init(l);
    l->function_id = id;
    l->line = line;
}

static Mapping *mapping_of(struct builder *b, uint32_t module)
{
    if (module == REPORT_NO_MODULE || module == NO_STACK_MODULE)
        return NULL;
    return &b->mappings[b->mapping_of[module]];
}

/* The lines of a frame from its location first on, innermost first. A frame without locations
 * gets one line naming it as the text report does ("module+0xoffset"). */
static size_t frame_lines(struct builder *b, const struct report_frame *f, size_t first)
{
    char name[512];
    if (f->location_count == 0) {
        add_line(b,
                 f->module == NO_STACK_MODULE
                     ? "(no stack)"
                     : report_stack_level_name(b->r, f, 0, name, sizeof name),
                 NULL, 0);
        return 1;
    }
    Mapping *m = mapping_of(b, f->module);
    for (size_t i = first; i < f->location_count; i++) {
        const struct report_location *l = &f->locations[i];
        add_line(b, report_stack_level_name(b->r, f, i, name, sizeof name), l->file, l->line);
        if (m != NULL && l->file != NULL)
            m->has_filenames = m->has_line_numbers = true;
    }
    if (m != NULL && f->location_count - first > 1)
        m->has_inline_frames = true;
    return f->location_count - first;
}

/* A location per distinct frame, and per first location kept (the leaf frame may drop inlined
 * wrappers). */
static uint64_t location_id(struct builder *b, const struct report_frame *f, size_t first)
{
    uint64_t hash =
        report_index_mix(report_index_mix(report_index_mix(11, f->module), f->offset), first);
    struct slot *slot =
        report_index_find(&b->location_index, hash, f->module, f->offset, first, NULL);
    if (slot == NULL || slot->used) {
        b->failed |= slot == NULL;
        return slot ? slot->value : 0;
    }
    struct built_location *built =
        array_push(&b->locations, &b->location_count, &b->location_capacity, sizeof *built);
    if (built == NULL) {
        b->failed = true;
        return 0;
    }
    Location *loc = &built->location;
    perftools__profiles__location__init(loc);
    loc->id = b->location_count;
    const Mapping *m = mapping_of(b, f->module);
    if (m != NULL) {
        loc->mapping_id = m->id;
        loc->address = m->memory_start + f->offset;
    } else if (f->module == REPORT_NO_MODULE) {
        loc->address = f->offset;
    }
    built->first_line = b->line_count;
    loc->n_line = frame_lines(b, f, first);
    report_index_fill(&b->location_index, slot, hash, f->module, f->offset, first, NULL, loc->id);
    return loc->id;
}

__attribute__((format(printf, 2, 3))) static void comment(struct builder *b, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    int64_t *slot = array_push(&b->comments, &b->comment_count, &b->comment_capacity, sizeof *slot);
    if (n < 0 || slot == NULL) {
        b->failed = true;
        if (n >= 0)
            free(text);
        return;
    }
    *slot = string_id(b, text);
    free(text);
}

/* The mapping's build id: the dump's, else the file's (libelf); a comment, and a line on warn
 * when the file is gone, says which modules have none. */
static void mapping_build_id(struct builder *b, Mapping *m, const struct report_module *mod)
{
    if (mod->build_id[0] != '\0') {
        m->build_id = string_id(b, mod->build_id);
        return;
    }
    if (mod->path[0] != '/') /* linux-vdso.so.1 and the like: no file */
        return;
    const char *file = mod->file ? mod->file : mod->path;
    char id[256];
    enum build_id_status status = report_elf_file_build_id(file, id, sizeof id);
    if (status == BUILD_ID_FOUND) {
        m->build_id = string_id(b, id);
    } else if (status == BUILD_ID_NONE) {
        comment(b, "%s has no build id: the dump has none and the file has no build-id note.",
                mod->path);
    } else {
        comment(b, "The build id of %s is unknown: the dump has none and %s is gone.", mod->path,
                file);
        if (b->warn != NULL)
            fprintf(b->warn,
                    "qaudit report: warning: %s is gone; its pprof mapping has no build id\n",
                    file);
    }
}

static void extend_modules(struct builder *b, const struct report_stack *s)
{
    for (size_t i = 0; i < s->frame_count; i++) {
        const struct report_frame *f = &s->frames[i];
        if (f->module != REPORT_NO_MODULE && f->offset + 1 > b->module_extent[f->module])
            b->module_extent[f->module] = f->offset + 1;
    }
}

static void add_mapping(struct builder *b, uint32_t module)
{
    const struct report_module *mod = &b->r->modules[module];
    Mapping *m = &b->mappings[b->mapping_count];
    perftools__profiles__mapping__init(m);
    b->mapping_of[module] = (uint32_t)b->mapping_count++;
    m->id = b->mapping_count;
    m->memory_start = ((uint64_t)module + 1) << MODULE_SHIFT;
    m->memory_limit = m->memory_start + ((b->module_extent[module] + 4095) & ~(uint64_t)4095);
    m->filename = string_id(b, mod->path);
    m->has_functions = b->r->symbolized && mod->has_symbols;
    mapping_build_id(b, m, mod);
}

/* A mapping per module some site's frame points into, the main program's first (pprof takes
 * mapping[0] for the main binary). */
static bool prepare_mappings(struct builder *b)
{
    const struct report *r = b->r;
    b->mappings = calloc(r->module_count + 1, sizeof *b->mappings);
    b->mapping_of = calloc(r->module_count + 1, sizeof *b->mapping_of);
    b->module_extent = calloc(r->module_count + 1, sizeof *b->module_extent);
    if (b->mappings == NULL || b->mapping_of == NULL || b->module_extent == NULL)
        return false;
    for (size_t i = 0; i < r->site_count; i++)
        extend_modules(b, &r->sites[i].stack);
    for (int main_first = 1; main_first >= 0; main_first--)
        for (uint32_t k = 0; k < r->module_count; k++)
            if (b->module_extent[k] > 0 && r->modules[k].is_main == (bool)main_first)
                add_mapping(b, k);
    return true;
}

/* The pools a profile's samples point into, one allocation each. */
struct samples {
    Sample *samples;
    Sample **pointers;
    uint64_t *location_ids;
    int64_t *values;
    Label *labels;
    Label **label_pointers;
};

static void samples_free(struct samples *s)
{
    free(s->samples);
    free(s->pointers);
    free(s->location_ids);
    free(s->values);
    free(s->labels);
    free(s->label_pointers);
}

static Label *add_label(struct builder *b, Sample *sample, const char *key, int64_t num,
                        const char *unit)
{
    Label *l = sample->label[sample->n_label++];
    perftools__profiles__label__init(l);
    l->key = string_id(b, key);
    l->num = num;
    l->num_unit = string_id(b, unit);
    return l;
}

/* Labels pprof's -tags and -tagfocus read: the mean size ("bytes", as Go's heap profiles have
 * it), a sampled site's samples, allocations made inside queue operations. */
static void site_labels(struct builder *b, Sample *sample, const struct report_site *s)
{
    if (s->est.allocs > 0)
        add_label(b, sample, "bytes", llround(s->est.bytes / s->est.allocs), "bytes");
    if (s->estimated)
        add_label(b, sample, "samples", (int64_t)s->allocs, "count");
    if (s->queue_allocs > 0)
        add_label(b, sample, "queue_allocs", (int64_t)s->queue_allocs, "count");
}

static void site_sample(struct builder *b, struct samples *pool, size_t i, uint64_t **ids)
{
    const struct report *r = b->r;
    const struct report_site *s = &r->sites[i];
    Sample *sample = &pool->samples[i];
    perftools__profiles__sample__init(sample);
    pool->pointers[i] = sample;
    sample->location_id = *ids;
    for (size_t j = 0; j < s->stack.frame_count; j++)
        (*ids)[sample->n_location_id++] =
            location_id(b, &s->stack.frames[j], report_stack_first_location(r, &s->stack, j));
    if (s->stack.frame_count == 0) {
        struct report_frame none = {.module = NO_STACK_MODULE};
        (*ids)[sample->n_location_id++] = location_id(b, &none, 0);
    }
    *ids += sample->n_location_id;
    sample->value = &pool->values[VALUES * i];
    sample->n_value = VALUES;
    sample->value[0] = llround(s->est.allocs);
    sample->value[1] = llround(s->est.bytes);
    sample->value[2] = llround(s->est.live_blocks);
    sample->value[3] = llround(s->est.live_bytes);
    sample->label = &pool->label_pointers[LABELS * i];
    for (size_t l = 0; l < LABELS; l++)
        sample->label[l] = &pool->labels[LABELS * i + l];
    site_labels(b, sample, s);
}

static bool build_samples(struct builder *b, struct samples *pool)
{
    const struct report *r = b->r;
    size_t frames = 0, n = r->site_count;
    for (size_t i = 0; i < n; i++)
        frames += r->sites[i].stack.frame_count ? r->sites[i].stack.frame_count : 1;
    pool->samples = calloc(n + 1, sizeof *pool->samples);
    pool->pointers = calloc(n + 1, sizeof *pool->pointers);
    pool->location_ids = calloc(frames + 1, sizeof *pool->location_ids);
    pool->values = calloc(VALUES * n + 1, sizeof *pool->values);
    pool->labels = calloc(LABELS * n + 1, sizeof *pool->labels);
    pool->label_pointers = calloc(LABELS * n + 1, sizeof *pool->label_pointers);
    if (!pool->samples || !pool->pointers || !pool->location_ids || !pool->values ||
        !pool->labels || !pool->label_pointers)
        return false;
    uint64_t *ids = pool->location_ids;
    for (size_t i = 0; i < n; i++)
        site_sample(b, pool, i, &ids);
    return !b->failed;
}

/* What a delta is (report_load_delta: one process, the window between two of its dumps, whose
 * files are gone by now): said in place of the dumps and of what live means at a dump. */
static void delta_comments(struct builder *b, const char *mode)
{
    const struct report_process *p = &b->r->processes[0];
    double seconds = p->dump_time_ns > b->r->delta_from_ns
                         ? (double)(p->dump_time_ns - b->r->delta_from_ns) / 1e9
                         : 0;
    comment(b, "qaudit: %s (pid %" PRIu64 "), a delta between two of its dumps %.1f s apart",
            p->argv, p->pid, seconds);
    comment(b,
            "A delta: what the process did between two dumps (the profile's time and duration): "
            "alloc_* the allocations made in between (realloc included), inuse_* the change of "
            "its live blocks and requested bytes (negative where it freed more than it "
            "allocated). Stacks %s.",
            mode);
}

/* What the profile is, for `pprof -comments` and the tools' info panels. */
static void profile_comments(struct builder *b)
{
    const struct report *r = b->r;
    char mode[128];
    report_stacks_mode(r, mode, sizeof mode);
    if (r->delta_from_ns != 0 && r->process_count == 1) {
        delta_comments(b, mode);
    } else {
        for (size_t i = 0; i < r->process_count && i < 3; i++)
            comment(b, "qaudit: %s (pid %" PRIu64 "), dump %s (%s)", r->processes[i].argv,
                    r->processes[i].pid, r->processes[i].source, r->processes[i].reason);
        if (r->process_count > 3)
            comment(b, "qaudit: and %zu more processes", r->process_count - 3);
        comment(b,
                "Stacks %s. alloc_objects and alloc_space count every allocation a site made "
                "(realloc included); inuse_objects and inuse_space its blocks and requested bytes "
                "live %s.",
                mode, report_live_scope_phrase(report_live_scope(r)));
    }
    double allocs, bytes;
    report_coverage(r, &allocs, &bytes);
    comment(b,
            "The sites account for %.0f of %" PRIu64 " allocations and %.0f of %" PRIu64
            " bytes requested.",
            allocs, r->totals.allocs + r->totals.reallocs, bytes, r->totals.bytes_requested);
    if (report_any_site_estimated(r))
        comment(b, "Sites from sampled stacks carry estimates, the samples scaled as the text "
                   "report scales them; label 'samples' holds their samples.");
    for (size_t i = 0; i < r->trust.note_count; i++)
        comment(b, "%s", r->trust.notes[i]);
    comment(b,
            "Addresses are offsets in each module's ELF file, module k's at (k + 1) << %d: "
            "merged processes loaded modules at different addresses.",
            MODULE_SHIFT);
}

/* How the stacks were sampled, when every process sampled alike. */
static void profile_period(struct builder *b, Profile *p, ValueType *period_type)
{
    const struct report *r = b->r;
    bool same = r->process_count > 0;
    for (size_t i = 1; i < r->process_count && same; i++)
        same = r->processes[i].sampling == r->processes[0].sampling &&
               r->processes[i].sample_every == r->processes[0].sample_every;
    const struct report_process *first = same ? &r->processes[0] : NULL;
    bool by_count = first && first->sampling == SAMPLING_COUNT;
    period_type->type = string_id(b, by_count ? "objects" : "space");
    period_type->unit = string_id(b, by_count ? "count" : "bytes");
    p->period_type = period_type;
    p->period = first == NULL                      ? 0
                : first->sampling == SAMPLING_NONE ? 1
                                                   : (int64_t)first->sample_every;
    uint64_t start = UINT64_MAX, end = 0;
    for (size_t i = 0; i < r->process_count; i++) {
        start = r->processes[i].start_time_ns < start ? r->processes[i].start_time_ns : start;
        end = r->processes[i].dump_time_ns > end ? r->processes[i].dump_time_ns : end;
    }
    if (r->delta_from_ns != 0)
        start = r->delta_from_ns; /* a delta: the window between its two dumps */
    if (start != UINT64_MAX && end >= start) {
        p->time_nanos = (int64_t)start;
        p->duration_nanos = (int64_t)(end - start);
    }
}

/* The pointer arrays protobuf-c packs from, made once nothing moves any more; then the profile
 * is written. */
static bool pack(struct builder *b, Profile *p, FILE *out)
{
    Function **functions = calloc(b->function_count + 1, sizeof *functions);
    Location **locations = calloc(b->location_count + 1, sizeof *locations);
    Line **lines = calloc(b->line_count + 1, sizeof *lines);
    Mapping **mappings = calloc(b->mapping_count + 1, sizeof *mappings);
    bool ok = functions && locations && lines && mappings;
    for (size_t i = 0; ok && i < b->function_count; i++)
        functions[i] = &b->functions[i];
    for (size_t i = 0; ok && i < b->line_count; i++)
        lines[i] = &b->lines[i];
    for (size_t i = 0; ok && i < b->location_count; i++) {
        locations[i] = &b->locations[i].location;
        locations[i]->line = &lines[b->locations[i].first_line];
    }
    for (size_t i = 0; ok && i < b->mapping_count; i++)
        mappings[i] = &b->mappings[i];
    if (ok) {
        p->function = functions;
        p->n_function = b->function_count;
        p->location = locations;
        p->n_location = b->location_count;
        p->mapping = mappings;
        p->n_mapping = b->mapping_count;
        p->string_table = b->strings;
        p->n_string_table = b->string_count;
        p->comment = b->comments;
        p->n_comment = b->comment_count;
        report_write_gzipped(out, &p->base);
    }
    free(functions);
    free(locations);
    free(lines);
    free(mappings);
    return ok;
}

static void builder_free(struct builder *b)
{
    for (size_t i = 0; i < b->string_count; i++)
        free(b->strings[i]);
    free(b->strings);
    free(b->string_index.slots);
    free(b->function_index.slots);
    free(b->location_index.slots);
    free(b->functions);
    free(b->locations);
    free(b->lines);
    free(b->mappings);
    free(b->mapping_of);
    free(b->module_extent);
    free(b->comments);
}

void report_render_pprof(FILE *out, const struct report *r, FILE *warn, bool allocs)
{
    struct builder b = {.r = r, .warn = warn};
    struct samples pool = {0};
    Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
    ValueType types[VALUES], period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    ValueType *type_pointers[VALUES];
    static const char *const names[VALUES][2] = {{"alloc_objects", "count"},
                                                 {"alloc_space", "bytes"},
                                                 {"inuse_objects", "count"},
                                                 {"inuse_space", "bytes"}};
    char **first = array_push(&b.strings, &b.string_count, &b.string_capacity, sizeof *first);
    if (first == NULL || (*first = strdup("")) == NULL || !prepare_mappings(&b))
        b.failed = true;
    for (int i = 0; i < VALUES && !b.failed; i++) {
        perftools__profiles__value_type__init(&types[i]);
        types[i].type = string_id(&b, names[i][0]);
        types[i].unit = string_id(&b, names[i][1]);
        type_pointers[i] = &types[i];
    }
    if (!b.failed && !build_samples(&b, &pool))
        b.failed = true;
    if (!b.failed) {
        p.sample_type = type_pointers;
        p.n_sample_type = VALUES;
        p.sample = pool.pointers;
        p.n_sample = r->site_count;
        p.default_sample_type = string_id(&b, allocs ? "alloc_space" : "inuse_space");
        profile_period(&b, &p, &period_type);
        profile_comments(&b);
    }
    if (b.failed || !pack(&b, &p, out))
        fprintf(stderr, "qaudit report: out of memory writing the pprof profile\n");
    samples_free(&pool);
    builder_free(&b);
}
