/* Reads one qaudit-alloc/1 dump (docs/dump-format.md) into a report, checking every field it uses:
 * a missing or mistyped field is named in the error, never guessed. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/grow_array.h"
#include "common/dump_keys.h"
#include "reports_reading.h"

struct reader {
    const char *path;
    char *error;
    size_t size;
    bool failed;
};

static void reader_fail(struct reader *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    int n = snprintf(r->error, r->size, "%s: ", r->path);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < r->size)
        vsnprintf(r->error + n, r->size - (size_t)n, fmt, ap);
    va_end(ap);
    report_one_line(r->error); /* jansson quotes the input; paths may hold a newline */
}

static json_t *field(struct reader *r, json_t *object, const char *where, const char *key,
                     json_type type)
{
    json_t *value = json_object_get(object, key);
    if (value == NULL || json_typeof(value) != type) {
        static const char *const names[] = {"an object", "an array", "a string", "an integer",
                                            "a number",  "true",     "false",    "null"};
        reader_fail(r, "%s%s%s is missing or not %s", where, where[0] ? "." : "", key, names[type]);
        return NULL;
    }
    return value;
}

static uint64_t number(struct reader *r, json_t *object, const char *where, const char *key)
{
    json_t *value = json_object_get(object, key);
    if (!json_is_integer(value) || json_integer_value(value) < 0) {
        reader_fail(r, "%s%s%s is missing or not a non-negative integer", where,
                    where[0] ? "." : "", key);
        return 0;
    }
    return (uint64_t)json_integer_value(value);
}

/* A field later dumps added: absent is fine (has says so), present it must be right. */
static uint64_t optional_number(struct reader *r, json_t *object, const char *where,
                                const char *key, bool *has)
{
    bool present = json_object_get(object, key) != NULL;
    if (has != NULL)
        *has = present;
    return present ? number(r, object, where, key) : 0;
}

static bool optional_flag(struct reader *r, json_t *object, const char *where, const char *key,
                          bool fallback)
{
    json_t *value = json_object_get(object, key);
    if (value == NULL)
        return fallback;
    if (!json_is_boolean(value)) {
        reader_fail(r, "%s.%s is not true/false", where, key);
        return fallback;
    }
    return json_is_true(value);
}

static const char *optional_text(struct reader *r, json_t *object, const char *where,
                                 const char *key)
{
    json_t *value = json_object_get(object, key);
    if (value == NULL)
        return NULL;
    if (!json_is_string(value)) {
        reader_fail(r, "%s.%s is not a string", where, key);
        return NULL;
    }
    return json_string_value(value);
}

static const char *text(struct reader *r, json_t *object, const char *where, const char *key)
{
    json_t *value = field(r, object, where, key, JSON_STRING);
    return value ? json_string_value(value) : "";
}

static bool flag(struct reader *r, json_t *object, const char *where, const char *key)
{
    json_t *value = json_object_get(object, key);
    if (!json_is_boolean(value)) {
        reader_fail(r, "%s.%s is missing or not true/false", where, key);
        return false;
    }
    return json_is_true(value);
}

static const char *string_or(json_t *value, const char *fallback)
{
    const char *s = json_string_value(value);
    return s ? s : fallback;
}

static uint64_t address(struct reader *r, json_t *value, const char *where)
{
    const char *s = json_string_value(value);
    char *end;
    errno = 0;
    unsigned long long a = s ? strtoull(s, &end, 16) : 0;
    if (s == NULL || strncmp(s, "0x", 2) != 0 || *end != '\0' || errno != 0) {
        reader_fail(r, "%s holds '%s', not a \"0x...\" address", where, s ? s : "(not a string)");
        return 0;
    }
    return a;
}

/* Module extents of this dump, sorted by start, for mapping frames to modules. */
struct extent {
    uint64_t start, end, base;
    uint32_t module;
};

static int by_start(const void *a, const void *b)
{
    const struct extent *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void read_modules(struct reader *r, json_t *doc, struct report *out, struct extent **extents)
{
    json_t *modules = field(r, doc, "", QA_KEY(modules), JSON_ARRAY);
    size_t i;
    json_t *m;
    *extents = calloc(json_array_size(modules) + 1, sizeof **extents);
    json_array_foreach(modules, i, m)
    {
        struct report_module *mod =
            array_push(&out->modules, &out->module_count, &out->module_capacity, sizeof *mod);
        if (mod == NULL || *extents == NULL)
            return;
        mod->path = report_copy_string(text(r, m, "modules[]", QA_KEY(path)));
        mod->build_id = report_copy_string(text(r, m, "modules[]", QA_KEY(build_id)));
        (*extents)[i] = (struct extent){
            address(r, json_object_get(m, QA_KEY(start)), "modules[].start"),
            address(r, json_object_get(m, QA_KEY(end)), "modules[].end"),
            address(r, json_object_get(m, QA_KEY(base)), "modules[].base"), (uint32_t)i};
    }
    qsort(*extents, out->module_count, sizeof **extents, by_start);
}

static void map_frame(const struct extent *extents, size_t n, uint64_t address,
                      struct report_frame *frame)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (extents[mid].start <= address)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && address < extents[lo - 1].end) {
        frame->module = extents[lo - 1].module;
        frame->offset = address - extents[lo - 1].base;
        return;
    }
    frame->module = REPORT_NO_MODULE;
    frame->offset = address;
}

static struct report_stack read_stack(struct reader *r, json_t *object, const char *where,
                                      const struct extent *extents, size_t n)
{
    struct report_stack stack = {0};
    json_t *frames = field(r, object, where, QA_KEY(frames), JSON_ARRAY);
    size_t count = json_array_size(frames);
    stack.frames = count ? calloc(count, sizeof *stack.frames) : NULL;
    if (count && stack.frames == NULL)
        return stack;
    for (size_t i = 0; i < count; i++)
        map_frame(extents, n, address(r, json_array_get(frames, i), where), &stack.frames[i]);
    stack.frame_count = count;
    return stack;
}

/* Reasons of an image's last dump; an older dump without end_time_ns says it by its reason. */
static bool is_final_reason(const char *reason)
{
    static const char *const finals[] = {"exit", "_exit", "fatal_signal", "exec"};
    for (size_t i = 0; i < sizeof finals / sizeof *finals; i++)
        if (strcmp(reason, finals[i]) == 0)
            return true;
    return false;
}

/* config: the stacks mode and, when sampled, the rate and whether it counts bytes. */
static void read_config(struct reader *r, json_t *doc, struct report_process *proc)
{
    json_t *config = json_object_get(doc, QA_KEY(config));
    const char *stacks = string_or(json_object_get(config, QA_KEY(stacks)), "?");
    proc->stacks_mode = report_copy_string(stacks);
    proc->stack_depth = optional_number(r, config, "config", QA_KEY(stack_depth), NULL);
    const char *sites = optional_text(r, config, "config", QA_KEY(queue_sites));
    proc->queue_sites = sites != NULL && sites[0] != '\0';
    if (strncmp(stacks, "sampled", 7) != 0)
        return;
    proc->sample_every = optional_number(r, config, "config", QA_KEY(sample_every), NULL);
    json_t *by_bytes = json_object_get(config, QA_KEY(sample_by_bytes));
    const char *unit = optional_text(r, config, "config", QA_KEY(sample_by));
    size_t len = strlen(stacks);
    if (by_bytes != NULL)
        proc->sampling = optional_flag(r, config, "config", QA_KEY(sample_by_bytes), false)
                             ? SAMPLING_BYTES
                             : SAMPLING_COUNT;
    else if (unit != NULL)
        proc->sampling = strcmp(unit, "bytes") == 0 ? SAMPLING_BYTES : SAMPLING_COUNT;
    else if (len > 8 && stacks[7] == ':') /* "sampled:64b" spelled in the mode */
        proc->sampling = stacks[len - 1] == 'b' ? SAMPLING_BYTES : SAMPLING_COUNT;
    else {
        proc->sampling = SAMPLING_COUNT;
        proc->sampling_inferred = true;
    }
    const char *intervals = optional_text(r, config, "config", QA_KEY(sample_intervals));
    proc->exponential = intervals != NULL && strcmp(intervals, "exponential") == 0;
    proc->geometric = intervals != NULL && strcmp(intervals, "geometric") == 0;
}

/* How many of argv's arguments to show: a process title written over argv (redis, PostgreSQL)
 * leaves the rest of its space as empty arguments, or pads the title with spaces; neither is
 * shown (they printed as 70 to 100 trailing spaces). */
static size_t shown_arguments(json_t *argv)
{
    size_t n = json_array_size(argv);
    while (n > 1 && string_or(json_array_get(argv, n - 1), "")[0] == '\0')
        n--;
    return n;
}

/* The text without the spaces after its last word. */
static void trim_trailing_spaces(char *text)
{
    size_t n = text ? strlen(text) : 0;
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        text[--n] = '\0';
}

/* argv joined by spaces; quoted: each argument a shell would read back as it is ('...' where it
 * holds anything but letters, digits and -_./=:,+@%). */
static char *joined_argv(json_t *argv, bool quoted)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (out == NULL)
        return NULL;
    size_t i, shown = shown_arguments(argv);
    json_t *item;
    json_array_foreach(argv, i, item)
    {
        if (i == shown)
            break;
        const char *arg = string_or(item, "");
        fputs(i > 0 ? " " : "", out);
        bool plain = arg[0] != '\0' && strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                                                   "VWXYZ0123456789-_./=:,+@%") == strlen(arg);
        if (!quoted || plain) {
            fputs(arg, out);
            continue;
        }
        fputc('\'', out);
        for (const char *c = arg; *c; c++)
            if (*c == '\'')
                fputs("'\\''", out);
            else
                fputc(*c, out);
        fputc('\'', out);
    }
    fclose(out);
    if (!quoted)
        trim_trailing_spaces(text);
    return text;
}

static void read_process(struct reader *r, json_t *doc, struct report *out)
{
    json_t *p = field(r, doc, "", QA_KEY(process), JSON_OBJECT);
    struct report_process *proc =
        array_push(&out->processes, &out->process_count, &out->process_capacity, sizeof *proc);
    if (p == NULL || proc == NULL)
        return;
    proc->pid = number(r, p, "process", QA_KEY(pid));
    proc->ppid = json_is_integer(json_object_get(p, QA_KEY(ppid)))
                     ? (uint64_t)json_integer_value(json_object_get(p, QA_KEY(ppid)))
                     : 0;
    proc->exe = report_copy_string(text(r, p, "process", QA_KEY(exe)));
    proc->start_time_ns = number(r, p, "process", QA_KEY(start_time_ns));
    proc->attached_at_ns = optional_number(r, p, "process", QA_KEY(attached_at), NULL);
    proc->dump_time_ns = number(r, p, "process", QA_KEY(dump_time_ns));
    proc->reason = report_copy_string(text(r, doc, "", QA_KEY(reason)));
    proc->source = report_copy_string(r->path);
    proc->sequence = optional_number(r, p, "process", QA_KEY(sequence), &proc->has_sequence);
    bool ended = false;
    optional_number(r, p, "process", QA_KEY(end_time_ns), &ended);
    proc->final = ended || is_final_reason(proc->reason);
    proc->end_signal = report_copy_string(optional_text(r, p, "process", QA_KEY(end_signal)));
    proc->run_id = report_copy_string(optional_text(r, p, "process", QA_KEY(run_id)));
    proc->pythonmalloc = report_copy_string(optional_text(r, p, "process", QA_KEY(pythonmalloc)));
    proc->fallback_dir = report_copy_string(
        optional_text(r, json_object_get(doc, QA_KEY(config)), "config", QA_KEY(fallback_dir)));
    json_t *parent = json_object_get(p, QA_KEY(forked_from));
    if (parent != NULL) {
        proc->forked = true;
        proc->forked_from_pid = number(r, parent, "process.forked_from", QA_KEY(pid));
        proc->forked_from_start_ns =
            number(r, parent, "process.forked_from", QA_KEY(start_time_ns));
    }
    read_config(r, doc, proc);
    json_t *argv = field(r, p, "process", QA_KEY(argv), JSON_ARRAY);
    proc->argv = joined_argv(argv, false);
    proc->command = joined_argv(argv, true);
}

/* timeline_writer: absent in older dumps (WRITER_UNKNOWN); an unknown state fails closed. */
static void read_timeline_writer(struct reader *r, json_t *doc, struct report_process *proc)
{
    static const char *const states[] = {"running", "waiting", "ended", "failed"};
    json_t *o = json_object_get(doc, QA_KEY(timeline_writer));
    if (o == NULL)
        return;
    const char *state = json_string_value(json_object_get(o, QA_KEY(state)));
    for (size_t i = 0; state != NULL && i < sizeof states / sizeof states[0]; i++)
        if (strcmp(state, states[i]) == 0)
            proc->writer = (enum report_writer)(WRITER_RUNNING + i);
    if (proc->writer == WRITER_UNKNOWN) {
        reader_fail(r, "timeline_writer.state is not running, waiting, ended or failed");
        return;
    }
    proc->writer_delay_ms = number(r, o, "timeline_writer", QA_KEY(delay_ms));
    proc->writer_forks = flag(r, o, "timeline_writer", QA_KEY(forks));
    if (json_object_get(o, QA_KEY(started_ns)) != NULL)
        proc->writer_started_ns = number(r, o, "timeline_writer", QA_KEY(started_ns));
    if (json_object_get(o, QA_KEY(stopped_ns)) != NULL)
        proc->writer_stopped_ns = number(r, o, "timeline_writer", QA_KEY(stopped_ns));
}

/* Memory over time (`timeline`, `timeline_period_ns`): absent in older dumps and with
 * QAUDIT_TIMELINE=off. live_bytes may dip below 0 while threads' counters are summed: read as 0. */
static void read_timeline(struct reader *r, json_t *doc, struct report_process *proc)
{
    json_t *list = json_object_get(doc, QA_KEY(timeline));
    if (list == NULL)
        return;
    read_timeline_writer(r, doc, proc);
    if (!json_is_array(list)) {
        reader_fail(r, "timeline is not an array");
        return;
    }
    proc->timeline_period_ns = number(r, doc, "", QA_KEY(timeline_period_ns));
    proc->timeline = calloc(json_array_size(list) + 1, sizeof *proc->timeline);
    proc->timeline_capacity = proc->timeline ? json_array_size(list) + 1 : 0;
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p)
    {
        json_t *live = json_object_get(p, QA_KEY(live_bytes));
        if (!json_is_object(p) || !json_is_integer(live)) {
            reader_fail(r, "timeline[%zu] is not an object with live_bytes", i);
            return;
        }
        if (proc->timeline == NULL)
            return;
        proc->timeline[proc->timeline_count++] = (struct report_point){
            number(r, p, "timeline[]", QA_KEY(time_ns)),
            json_integer_value(live) > 0 ? (uint64_t)json_integer_value(live) : 0,
            number(r, p, "timeline[]", QA_KEY(allocs)),
            number(r, p, "timeline[]", QA_KEY(rss_bytes))};
    }
}

/* totals.inherited of a forked child's dump: what it can have freed of it is bounded by it. */
static void read_inherited(struct reader *r, json_t *o, struct report_inherited *in)
{
    if (o == NULL)
        return;
    in->processes = 1;
    in->blocks = number(r, o, "totals.inherited", QA_KEY(blocks));
    in->bytes = number(r, o, "totals.inherited", QA_KEY(bytes));
    json_t *freed = field(r, o, "totals.inherited", QA_KEY(freed), JSON_OBJECT);
    in->freed_blocks = number(r, freed, "totals.inherited.freed", QA_KEY(blocks));
    in->freed_bytes = number(r, freed, "totals.inherited.freed", QA_KEY(bytes));
    in->reallocated = number(r, o, "totals.inherited", QA_KEY(reallocated));
    if (!r->failed && (in->freed_blocks > in->blocks || in->freed_bytes > in->bytes ||
                       in->reallocated > in->freed_blocks))
        reader_fail(r, "totals.inherited: more freed than inherited");
}

/* totals.calls' keys, in enum report_call's order. */
static const char *const call_keys[CALL_COUNT] = {[CALL_MALLOC] = QA_KEY(malloc),
                                                  [CALL_CALLOC] = QA_KEY(calloc),
                                                  [CALL_REALLOC] = QA_KEY(realloc),
                                                  [CALL_REALLOCARRAY] = QA_KEY(reallocarray),
                                                  [CALL_POSIX_MEMALIGN] = QA_KEY(posix_memalign),
                                                  [CALL_ALIGNED_ALLOC] = QA_KEY(aligned_alloc),
                                                  [CALL_MEMALIGN] = QA_KEY(memalign),
                                                  [CALL_VALLOC] = QA_KEY(valloc),
                                                  [CALL_PVALLOC] = QA_KEY(pvalloc),
                                                  [CALL_FREE] = QA_KEY(free)};

static void read_totals(struct reader *r, json_t *doc, struct report_totals *t)
{
    json_t *o = field(r, doc, "", QA_KEY(totals), JSON_OBJECT);
    if (o == NULL)
        return;
    t->allocs = number(r, o, "totals", QA_KEY(allocs));
    t->frees = number(r, o, "totals", QA_KEY(frees));
    t->reallocs = number(r, o, "totals", QA_KEY(reallocs));
    t->reallocs_in_place = number(r, o, "totals", QA_KEY(reallocs_in_place));
    t->reallocs_moved = number(r, o, "totals", QA_KEY(reallocs_moved));
    t->aligned_allocs = number(r, o, "totals", QA_KEY(aligned_allocs));
    t->failed_allocs = number(r, o, "totals", QA_KEY(failed_allocs));
    t->bytes_requested = number(r, o, "totals", QA_KEY(bytes_requested));
    t->bytes_usable = number(r, o, "totals", QA_KEY(bytes_usable));
    t->live_bytes = number(r, o, "totals", QA_KEY(live_bytes));
    t->live_blocks = number(r, o, "totals", QA_KEY(live_blocks));
    t->peak_live_bytes = number(r, o, "totals", QA_KEY(peak_live_bytes));
    t->threads = number(r, o, "totals", QA_KEY(threads));
    t->temporary = optional_number(r, o, "totals", QA_KEY(temporary), &t->has_temporary);
    json_t *calls = field(r, o, "totals", QA_KEY(calls), JSON_OBJECT);
    for (int c = 0; c < CALL_COUNT && calls; c++)
        t->calls[c] = number(r, calls, "totals.calls", call_keys[c]);
    read_inherited(r, json_object_get(o, QA_KEY(inherited)), &t->inherited);
}

/* A list of {key_name, count_name} objects into counts. */
static void read_counts(struct reader *r, json_t *list, const char *where, const char *key_name,
                        const char *count_name, struct report_count **out, size_t *count,
                        size_t *capacity)
{
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item)
    {
        struct report_count *c = array_push(out, count, capacity, sizeof *c);
        if (c == NULL)
            return;
        c->key = number(r, item, where, key_name);
        c->count = number(r, item, where, count_name);
    }
}

static void read_sizes(struct reader *r, json_t *doc, struct report *out)
{
    size_t i;
    json_t *item;
    json_array_foreach(field(r, doc, "", QA_KEY(requested_sizes), JSON_ARRAY), i, item)
    {
        struct report_bucket *b = array_push(&out->requested_sizes, &out->requested_count,
                                             &out->requested_capacity, sizeof *b);
        if (b == NULL)
            return;
        b->from = number(r, item, "requested_sizes[]", QA_KEY(from));
        b->to = number(r, item, "requested_sizes[]", QA_KEY(to));
        b->count = number(r, item, "requested_sizes[]", QA_KEY(count));
    }
    read_counts(r, field(r, doc, "", QA_KEY(usable_sizes), JSON_ARRAY), "usable_sizes[]",
                QA_KEY(usable), QA_KEY(count), &out->usable_sizes, &out->usable_count,
                &out->usable_capacity);
}

static void read_sites(struct reader *r, json_t *doc, struct report *out,
                       const struct extent *extents)
{
    size_t i;
    json_t *s;
    json_t *sites = field(r, doc, "", QA_KEY(sites), JSON_ARRAY);
    out->sites = calloc(json_array_size(sites) + 1, sizeof *out->sites);
    out->site_capacity = out->sites ? json_array_size(sites) + 1 : 0; /* fork_inheritance.c adds */
    json_array_foreach(sites, i, s)
    {
        if (out->sites == NULL || r->failed)
            return;
        struct report_site *site = &out->sites[out->site_count++];
        site->stack = read_stack(r, s, "sites[]", extents, out->module_count);
        site->allocs = number(r, s, "sites[]", QA_KEY(allocs));
        site->frees = number(r, s, "sites[]", QA_KEY(frees));
        site->bytes = number(r, s, "sites[]", QA_KEY(bytes));
        site->live_bytes = number(r, s, "sites[]", QA_KEY(live_bytes));
        site->peak_live_bytes = number(r, s, "sites[]", QA_KEY(peak_live_bytes));
        site->never_written_bytes = number(r, s, "sites[]", QA_KEY(never_written_bytes));
        site->queue_allocs = number(r, s, "sites[]", QA_KEY(queue_allocs));
        site->temporary = optional_number(r, s, "sites[]", QA_KEY(temporary), NULL);
        site->allocs_estimate =
            (double)optional_number(r, s, "sites[]", QA_KEY(allocs_estimate), NULL);
        site->bytes_estimate =
            (double)optional_number(r, s, "sites[]", QA_KEY(bytes_estimate), NULL);
        site->id = optional_number(r, s, "sites[]", QA_KEY(id), NULL);
        json_t *in = json_object_get(s, QA_KEY(inherited));
        if (in != NULL) {
            site->inherited_blocks = number(r, in, "sites[].inherited", QA_KEY(blocks));
            site->inherited_bytes = number(r, in, "sites[].inherited", QA_KEY(bytes));
            site->inherited_freed = number(r, in, "sites[].inherited", QA_KEY(freed_blocks));
            site->inherited_freed_bytes = number(r, in, "sites[].inherited", QA_KEY(freed_bytes));
        }
    }
}

/* inherited_sites of a forked child's dump: [id, blocks, bytes], or [id, blocks, bytes,
 * freed_blocks, freed_bytes] where the child freed some of the site's inherited blocks. */
static void read_inherited_sites(struct reader *r, json_t *doc, struct report *out)
{
    json_t *list = json_object_get(doc, QA_KEY(inherited_sites));
    if (list == NULL)
        return;
    if (!json_is_array(list)) {
        reader_fail(r, "inherited_sites is not an array");
        return;
    }
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item)
    {
        size_t n = json_array_size(item);
        bool ok = json_is_array(item) && (n == 3 || n == 5);
        uint64_t v[5] = {0};
        for (size_t k = 0; k < n && ok; k++) {
            json_t *value = json_array_get(item, k);
            ok = json_is_integer(value) && json_integer_value(value) >= 0;
            v[k] = ok ? (uint64_t)json_integer_value(value) : 0;
        }
        if (!ok || v[3] > v[1] || v[4] > v[2]) {
            reader_fail(r,
                        "inherited_sites[%zu] is not [id, blocks, bytes] or [id, blocks, bytes, "
                        "freed_blocks, freed_bytes] with no more freed than inherited",
                        i);
            return;
        }
        struct report_inherited_site *site =
            array_push(&out->inherited_sites, &out->inherited_site_count,
                       &out->inherited_site_capacity, sizeof *site);
        if (site == NULL)
            return;
        *site = (struct report_inherited_site){v[0], v[1], v[2], v[3], v[4]};
    }
}

static void read_queues(struct reader *r, json_t *doc, struct report_queues *q)
{
    json_t *o = field(r, doc, "", QA_KEY(queues), JSON_OBJECT);
    if (o == NULL)
        return;
    q->pushes = number(r, o, "queues", QA_KEY(pushes));
    q->pops = number(r, o, "queues", QA_KEY(pops));
    q->discarded = number(r, o, "queues", QA_KEY(discarded));
    q->moved = number(r, o, "queues", QA_KEY(moved));
    q->queued_now = number(r, o, "queues", QA_KEY(queued_now));
    q->grows = number(r, o, "queues", QA_KEY(grows));
    q->shrinks = number(r, o, "queues", QA_KEY(shrinks));
    q->returns_to_inline = number(r, o, "queues", QA_KEY(returns_to_inline));
    read_counts(r, field(r, o, "queues", QA_KEY(depth_histogram), JSON_ARRAY),
                "queues.depth_histogram[]", QA_KEY(depth), QA_KEY(pushes), &q->depth_histogram,
                &q->depth_histogram_count, &q->depth_histogram_capacity);
    read_counts(r, field(r, o, "queues", QA_KEY(allocs_by_depth), JSON_ARRAY),
                "queues.allocs_by_depth[]", QA_KEY(depth), QA_KEY(allocs), &q->allocs_by_depth,
                &q->allocs_by_depth_count, &q->allocs_by_depth_capacity);
    size_t i;
    json_t *item;
    json_array_foreach(field(r, o, "queues", QA_KEY(by_peak_depth), JSON_ARRAY), i, item)
    {
        struct report_peak *p = array_push(&q->by_peak_depth, &q->by_peak_depth_count,
                                           &q->by_peak_depth_capacity, sizeof *p);
        if (p == NULL)
            return;
        p->peak_depth = number(r, item, "queues.by_peak_depth[]", QA_KEY(peak_depth));
        p->connections = number(r, item, "queues.by_peak_depth[]", QA_KEY(connections));
        p->allocs = number(r, item, "queues.by_peak_depth[]", QA_KEY(allocs));
        p->bytes = number(r, item, "queues.by_peak_depth[]", QA_KEY(bytes));
    }
    json_t *connections = field(r, o, "queues", QA_KEY(connections), JSON_OBJECT);
    q->opened = number(r, connections, "queues.connections", QA_KEY(opened));
    q->closed = number(r, connections, "queues.connections", QA_KEY(closed));
    json_t *attribution = field(r, o, "queues", QA_KEY(attribution), JSON_OBJECT);
    q->by_hooks = number(r, attribution, "queues.attribution", QA_KEY(by_hooks));
    q->by_stack_patterns = number(r, attribution, "queues.attribution", QA_KEY(by_stack_patterns));
    q->by_both = number(r, attribution, "queues.attribution", QA_KEY(by_both));
    q->events_without_connection = number(r, o, "queues", QA_KEY(events_without_connection));
    q->refused_events = number(r, o, "queues", QA_KEY(refused_events));
    q->records_dropped = number(r, o, "queues", QA_KEY(records_dropped));
}

/* checks[].status, which must agree with passed; not_applicable marks the ones read as n/a (an
 * older dump has no status: checks.c derives it). */
static bool read_status(struct reader *r, const char *status, struct report_check *check)
{
    for (int s = CHECK_PASS; s <= CHECK_NA; s++)
        if (strcmp(status, report_check_status_names[s]) == 0) {
            if ((s == CHECK_PASS) == (check->failed != 0)) {
                reader_fail(r, "checks[].status '%s' of %s contradicts passed", status,
                            check->name);
                return false;
            }
            check->status = (enum report_check_status)s;
            check->failed = s == CHECK_FAIL;
            check->not_applicable = s == CHECK_NA;
            return true;
        }
    reader_fail(r, "checks[].status is '%s', not pass, fail or n/a", status);
    return false;
}

static void read_checks(struct reader *r, json_t *doc, struct report *out)
{
    size_t i;
    json_t *c;
    json_array_foreach(field(r, doc, "", QA_KEY(checks), JSON_ARRAY), i, c)
    {
        struct report_check *check =
            array_push(&out->checks, &out->check_count, &out->check_capacity, sizeof *check);
        if (check == NULL)
            return;
        check->name = report_copy_string(text(r, c, "checks[]", QA_KEY(name)));
        check->detail = report_copy_string(text(r, c, "checks[]", QA_KEY(detail)));
        check->dumps = 1;
        check->failed = !flag(r, c, "checks[]", QA_KEY(passed));
        check->status = check->failed ? CHECK_FAIL : CHECK_PASS;
        const char *status = optional_text(r, c, "checks[]", QA_KEY(status));
        if (status == NULL)
            report_check_derive(out, check);
        else if (!read_status(r, status, check))
            return;
    }
}

static void read_events(struct reader *r, json_t *list, const char *where,
                        const struct extent *extents, size_t modules, uint64_t pid,
                        struct report_event **out, size_t *count, size_t *capacity)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        struct report_event *event = array_push(out, count, capacity, sizeof *event);
        if (event == NULL || r->failed)
            return;
        event->pid = pid;
        event->stack = read_stack(r, e, where, extents, modules);
        event->size = number(r, e, where, QA_KEY(size));
        if (json_object_get(e, QA_KEY(depth)))
            event->depth = number(r, e, where, QA_KEY(depth));
        if (json_object_get(e, QA_KEY(candidate)))
            event->candidate = number(r, e, where, QA_KEY(candidate));
    }
}

/* The names of an object's keys whose value is a number above 0, joined by ", " (or the list's
 * strings); "" when none. */
static void joined_names(json_t *value, bool counted, char *out, size_t size)
{
    size_t used = 0;
    const char *key;
    json_t *item;
    size_t i;
    out[0] = '\0';
    if (counted)
        json_object_foreach(value, key, item)
        {
            if (json_integer_value(item) > 0 && used < size)
                used += (size_t)snprintf(out + used, size - used, "%s%s", used ? ", " : "", key);
        }
    else
        json_array_foreach(value, i, item)
        {
            const char *name = string_or(item, "?"), *slash = strrchr(name, '/');
            if (used < size)
                used += (size_t)snprintf(out + used, size - used, "%s%s", used ? ", " : "",
                                         slash ? slash + 1 : name);
        }
}

/* precision.allocators.NAME.attach_unreached (qaudit attach): the entry points that modules
 * bind into each allocator no attach reaches. */
static void read_attach_unreached(json_t *allocators, struct report_precision *p)
{
    const char *name;
    json_t *family;
    json_object_foreach(allocators, name, family)
    {
        json_t *entries = json_object_get(family, QA_KEY(attach_unreached));
        if (!json_is_object(entries))
            continue;
        char bound[512], by[512];
        joined_names(entries, true, bound, sizeof bound);
        joined_names(json_object_get(family, QA_KEY(attach_unreached_bound_by)), false, by,
                     sizeof by);
        if (bound[0] != '\0')
            report_push_string(&p->attach_unreached, &p->attach_unreached_count,
                               &p->attach_unreached_capacity, "%s: %s bound by %s", name, bound,
                               by);
        else
            report_push_string(&p->attach_unreached, &p->attach_unreached_count,
                               &p->attach_unreached_capacity, "%s: none bound", name);
    }
}

static void read_precision(struct reader *r, json_t *doc, struct report_precision *p)
{
    json_t *o = field(r, doc, "", QA_KEY(precision), JSON_OBJECT);
    if (o == NULL)
        return;
    p->exact = flag(r, o, "precision", QA_KEY(exact));
    p->peak_live_bytes_within = number(r, o, "precision", QA_KEY(peak_live_bytes_within));
    p->blocks_untracked = number(r, o, "precision", QA_KEY(blocks_untracked));
    p->sites_dropped = number(r, o, "precision", QA_KEY(sites_dropped));
    p->stacks_truncated = number(r, o, "precision", QA_KEY(stacks_truncated));
    p->usable_sizes_dropped = number(r, o, "precision", QA_KEY(usable_sizes_dropped));
    p->modules_dropped = number(r, o, "precision", QA_KEY(modules_dropped));
    p->never_written_unattributed = number(r, o, "precision", QA_KEY(never_written_unattributed));
    size_t i;
    json_t *lib;
    json_array_foreach(field(r, o, "precision", QA_KEY(deepbind_libraries), JSON_ARRAY), i, lib)
    {
        char **slot = array_push(&p->deepbind_libraries, &p->deepbind_count, &p->deepbind_capacity,
                                 sizeof *slot);
        if (slot)
            *slot = report_copy_string(string_or(lib, "?"));
    }
    /* Fields of later dumps: what the preload could not see. */
    json_t *uninterposed = json_object_get(o, QA_KEY(uninterposed_allocators));
    json_array_foreach(uninterposed, i, lib)
    {
        char **slot = array_push(&p->uninterposed_allocators, &p->uninterposed_count,
                                 &p->uninterposed_capacity, sizeof *slot);
        if (slot)
            *slot = report_copy_string(string_or(lib, "?"));
    }
    read_attach_unreached(json_object_get(o, QA_KEY(allocators)), p);
    json_array_foreach(json_object_get(o, QA_KEY(unreachable_allocators)), i, lib)
        report_push_string(&p->unreachable_allocators, &p->unreachable_count,
                           &p->unreachable_capacity, "%s has %s",
                           string_or(json_object_get(lib, QA_KEY(library)), "?"),
                           string_or(json_object_get(lib, QA_KEY(allocator)), "?"));
    if (optional_flag(r, o, "precision", QA_KEY(unexplained_anonymous), false)) {
        p->unexplained_anonymous = 1;
        uint64_t grew = optional_number(r, o, "precision", QA_KEY(anonymous_bytes), NULL) -
                        optional_number(r, o, "precision", QA_KEY(anonymous_bytes_at_start), NULL);
        uint64_t peak = optional_number(r, o, "precision", QA_KEY(counted_peak_live_bytes), NULL);
        p->unexplained_bytes = grew > peak && grew < (1ull << 62) ? grew - peak : 0;
    }
    p->modules_unknown = !optional_flag(r, o, "precision", QA_KEY(modules_known), true);
}

static void read_document(struct reader *r, json_t *doc, struct report *out)
{
    const char *format = json_string_value(json_object_get(doc, QA_KEY(format)));
    if (format == NULL) {
        reader_fail(r, "not a qaudit dump (no \"format\" field)");
        return;
    }
    if (strcmp(format, "qaudit-alloc/1") != 0) {
        reader_fail(r, "format is '%s'; this qaudit reads qaudit-alloc/1", format);
        return;
    }
    struct extent *extents = NULL;
    read_process(r, doc, out);
    if (out->process_count > 0)
        read_timeline(r, doc, &out->processes[0]);
    read_modules(r, doc, out, &extents);
    if (out->process_count > 0)
        out->processes[0].runtime = report_runtime_of_dump(out);
    read_totals(r, doc, &out->totals);
    read_sizes(r, doc, out);
    if (out->process_count > 0) {
        out->processes[0].small_allocs = report_small_allocs(out);
        out->processes[0].alloc_calls = out->totals.allocs + out->totals.reallocs;
    }
    if (extents != NULL)
        read_sites(r, doc, out, extents);
    read_inherited_sites(r, doc, out);
    read_queues(r, doc, &out->queues);
    read_checks(r, doc, out);
    uint64_t pid = out->process_count ? out->processes[0].pid : 0;
    if (extents != NULL)
        read_events(r, field(r, doc, "", QA_KEY(depth_one_violations), JSON_ARRAY),
                    "depth_one_violations[]", extents, out->module_count, pid, &out->violations,
                    &out->violation_count, &out->violation_capacity);
    json_t *failures = field(r, doc, "", QA_KEY(injected_failures), JSON_OBJECT);
    if (failures != NULL && extents != NULL) {
        out->failure_candidates = number(r, failures, "injected_failures", QA_KEY(candidates));
        out->failures_injected = number(r, failures, "injected_failures", QA_KEY(injected));
        read_events(r, field(r, failures, "injected_failures", QA_KEY(first), JSON_ARRAY),
                    "injected_failures.first[]", extents, out->module_count, pid, &out->failures,
                    &out->failure_count, &out->failure_capacity);
    }
    read_precision(r, doc, &out->precision);
    free(extents);
    if (out->process_count > 0)
        out->processes[0].modules_known = out->precision.modules_unknown == 0;
    out->totals.has_temporary = out->totals.has_temporary && !r->failed;
    out->has_sequences = out->process_count > 0 && out->processes[0].has_sequence;
    out->temporary_missing = !out->totals.has_temporary;
    if (!r->failed)
        report_estimate_sites(out);
}

enum report_status report_dump_read(const char *path, struct report *out, char *error, size_t size)
{
    struct reader r = {path, error, size, false};
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* a FIFO would block the read */
        reader_fail(&r, "not a regular file");
        return REPORT_INPUT_ERROR;
    }
    json_error_t jerr;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL) {
        if (jerr.line < 0)
            reader_fail(&r, "cannot read: %s", jerr.text);
        else
            reader_fail(&r, "line %d, column %d: %s (truncated or not JSON)", jerr.line,
                        jerr.column, jerr.text);
        return REPORT_INPUT_ERROR;
    }
    if (!json_is_object(doc))
        reader_fail(&r, "not a qaudit dump (the top level is not an object)");
    else
        read_document(&r, doc, out);
    json_decref(doc);
    return r.failed ? REPORT_INPUT_ERROR : REPORT_OK;
}
