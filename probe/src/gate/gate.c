/* The gate's check: reads a baseline (jansson), checks each rule against the layout, and keeps
 * every rule with its verdict; a broken size or class rule says which member changed. */
#include "probe/gate.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "probe_gate.h"
#include "probe/classes.h"
#include "probe/functions.h"

bool gate_pin_parse(const char *word, enum gate_pin *pin)
{
    static const char *const words[] = {"exact", "max", "class"};
    for (int i = 0; i < 3; i++)
        if (strcmp(word, words[i]) == 0) {
            *pin = (enum gate_pin)(GATE_PIN_EXACT + i);
            return true;
        }
    return false;
}

/* The type a baseline names: by its name as printed, else by another spelling of it (a baseline
 * written when C++ names kept the producer's "long unsigned int"). */
static const struct layout_type *find_type(const struct layout_set *set, const char *name)
{
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(set->types[i].name, name) == 0)
            return &set->types[i];
    char *canonical = probe_cxx_canonical(name);
    const struct layout_type *found = NULL;
    for (size_t i = 0; canonical != NULL && found == NULL && i < set->count; i++)
        if (probe_cxx_names_equivalent(canonical, set->types[i].name))
            found = &set->types[i];
    free(canonical);
    return found;
}

/* What a rule is about: a type (its kind, name and definition's place) or a function. */
struct subject {
    const char *kind, *name, *file;
    unsigned line;
    const char *why; /* what changed in the type since the baseline, or "" */
};

/* Records a rule; broken when fmt is not NULL ("kind name: " + fmt + ": " + why). */
static void record(struct gate_report *r, const struct subject *s, const char *rule, bool explain,
                   const char *fmt, ...)
{
    char message[1024];
    if (fmt != NULL) {
        int n = snprintf(message, sizeof message, "%s %s: ", s->kind, s->name);
        va_list ap;
        va_start(ap, fmt);
        n += vsnprintf(message + n, sizeof message - (size_t)n, fmt, ap);
        va_end(ap);
        if (explain && s->why[0] && (size_t)n < sizeof message)
            snprintf(message + n, sizeof message - (size_t)n, ": %s", s->why);
    }
    if (!array_reserve(&r->rules, &r->rule_capacity, r->rule_count + 1, sizeof *r->rules))
        return;
    r->rules[r->rule_count++] = (struct gate_rule){strdup(s->name),
                                                   strdup(rule),
                                                   fmt ? strdup(message) : NULL,
                                                   s->file ? strdup(s->file) : NULL,
                                                   s->line,
                                                   strcmp(s->kind, "function") == 0};
    r->broken_count += fmt != NULL;
}

static bool integer(json_t *value, const char *what, const char *type, long long *out, char *error,
                    size_t size)
{
    if (!json_is_integer(value) || json_integer_value(value) < 0) {
        probe_fail(error, size, "baseline: %s of %s must be a non-negative integer", what, type);
        return false;
    }
    *out = json_integer_value(value);
    return true;
}

static int allocator_named(const char *name)
{
    for (int a = 0; a < ALLOC_COUNT; a++)
        if (strcmp(probe_class_models[a].name, name) == 0)
            return a;
    return -1;
}

struct check {
    const struct layout_type *t;
    struct subject s;
    unsigned cacheline;
    struct gate_report *r;
    char *error;
    size_t error_size;
};

static bool check_size(struct check *c, const char *key, json_t *value)
{
    long long want;
    if (!integer(value, key, c->t->name, &want, c->error, c->error_size))
        return false;
    bool exact = key[0] == 's';
    uint64_t size = c->t->size;
    if (exact ? size != (uint64_t)want : size > (uint64_t)want)
        record(c->r, &c->s, key, true, "size %" PRIu64 " %s %lld (%+lld B)", size,
               exact ? "!=" : ">", want, (long long)size - want);
    else
        record(c->r, &c->s, key, false, NULL);
    return true;
}

static bool check_holes(struct check *c, json_t *value)
{
    long long want;
    if (!integer(value, "max_holes", c->t->name, &want, c->error, c->error_size))
        return false;
    if (c->t->byte_holes > (uint64_t)want)
        record(c->r, &c->s, "max_holes", true, "%zu holes > %lld (%" PRIu64 " B in holes)",
               c->t->byte_holes, want, c->t->hole_bytes);
    else
        record(c->r, &c->s, "max_holes", false, NULL);
    return true;
}

/* One entry of max_class, offsets or within. */
static bool check_entry(struct check *c, const char *key, const char *inner, json_t *limit)
{
    char rule[512];
    long long want;
    snprintf(rule, sizeof rule, "%s.%s", key, inner);
    if (!integer(limit, rule, c->t->name, &want, c->error, c->error_size))
        return false;
    const struct layout_type *t = c->t;
    if (key[0] == 'm') {
        int a = allocator_named(inner);
        struct size_class sc;
        if (a < 0) {
            probe_fail(
                c->error, c->error_size,
                "baseline: unknown allocator '%s' in %s (glibc, mimalloc, jemalloc, tcmalloc)",
                inner, t->name);
            return false;
        }
        probe_class_of((enum allocator)a, t->size ? t->size : 1, &sc);
        if (sc.reserved > (uint64_t)want)
            record(c->r, &c->s, rule, true, "%s class %" PRIu64 " > %lld (size %" PRIu64 ")", inner,
                   sc.reserved, want, t->size);
        else
            record(c->r, &c->s, rule, false, NULL);
        return true;
    }
    const struct layout_member *m = probe_gate_find_member(t, inner);
    if (m == NULL) { /* a member the baseline pins is gone: that is a regression */
        record(c->r, &c->s, rule, false, "member %s is gone (the baseline pins it)", inner);
    } else if (key[0] == 'o') {
        if (m->offset != (uint64_t)want)
            record(c->r, &c->s, rule, false, "%s at offset %" PRIu64 ", pinned at %lld (%+lld B)",
                   inner, m->offset, want, (long long)m->offset - want);
        else
            record(c->r, &c->s, rule, false, NULL);
    } else {
        uint64_t first = m->offset / c->cacheline;
        uint64_t last = (m->offset + (m->size ? m->size : 1) - 1) / c->cacheline;
        if (first != (uint64_t)want || last != (uint64_t)want)
            record(c->r, &c->s, rule, false,
                   "%s spans cache lines %" PRIu64 "-%" PRIu64 ", must stay in line %lld", inner,
                   first, last, want);
        else
            record(c->r, &c->s, rule, false, NULL);
    }
    return true;
}

/* "members": every member listed keeps its offset and size, and none is added. */
static bool check_members(struct check *c, json_t *members, bool pinned)
{
    const char *name;
    json_t *want;
    char rule[512], change[256];
    json_object_foreach(members, name, want)
    {
        bool bits;
        long long offset, size;
        if (!probe_gate_member_parse(want, &bits, &offset, &size)) {
            probe_fail(c->error, c->error_size,
                       "baseline: members.%s of %s must be {\"offset\": N, \"size\": N} or "
                       "{\"bit_offset\": N, \"bit_size\": N}",
                       name, c->t->name);
            return false;
        }
        if (!pinned)
            continue; /* under "pin": "max" or "class" the members only explain */
        snprintf(rule, sizeof rule, "members.%s", name);
        const struct layout_member *m = probe_gate_find_member(c->t, name);
        if (m == NULL)
            record(c->r, &c->s, rule, false, "member %s is gone (the baseline pins it)", name);
        else if (probe_gate_member_change(m, want, change, sizeof change))
            record(c->r, &c->s, rule, false, "member %s %s", name, change);
        else
            record(c->r, &c->s, rule, false, NULL);
    }
    if (!pinned)
        return true;
    char added[512] = "", one[160] = "";
    size_t count = 0;
    for (size_t i = 0; i < c->t->member_count; i++) {
        const struct layout_member *m = &c->t->members[i];
        if (!probe_gate_names_member(m) || json_object_get(members, m->name) != NULL)
            continue;
        size_t n = strlen(added);
        if (count++ < 4)
            snprintf(added + n, sizeof added - n, "%s%s at offset %" PRIu64 " (%" PRIu64 " B)",
                     n ? ", " : "", m->name, m->offset, m->size);
        if (count == 1)
            snprintf(one, sizeof one, "%s was added at offset %" PRIu64 " (%" PRIu64 " B)", m->name,
                     m->offset, m->size);
    }
    if (count == 1)
        record(c->r, &c->s, "members", false, "member %s", one);
    else if (count > 1)
        record(c->r, &c->s, "members", false, "%zu members were added: %s%s", count, added,
               count > 4 ? ", ..." : "");
    else
        record(c->r, &c->s, "members", false, NULL);
    return true;
}

/* The rules of one type; false on a baseline error (then error is set). */
static bool check_type(struct check *c, json_t *rules)
{
    json_t *pin_value = json_object_get(rules, "pin");
    enum gate_pin pin = GATE_PIN_EXACT;
    if (pin_value != NULL &&
        (!json_is_string(pin_value) || !gate_pin_parse(json_string_value(pin_value), &pin))) {
        probe_fail(c->error, c->error_size,
                   "baseline: pin of %s must be \"exact\", \"max\" or \"class\"", c->t->name);
        return false;
    }
    char why[512];
    probe_gate_explain(c->t, rules, why, sizeof why);
    c->s.why = why;
    const char *key;
    json_t *value;
    json_object_foreach(rules, key, value)
    {
        bool ok = true;
        if (strcmp(key, "pin") == 0)
            continue;
        if (strcmp(key, "size") == 0 || strcmp(key, "max_size") == 0) {
            ok = check_size(c, key, value);
        } else if (strcmp(key, "max_holes") == 0) {
            ok = check_holes(c, value);
        } else if (strcmp(key, "members") == 0 && json_is_object(value)) {
            ok = check_members(c, value, pin == GATE_PIN_EXACT);
        } else if ((strcmp(key, "max_class") == 0 || strcmp(key, "offsets") == 0 ||
                    strcmp(key, "within") == 0) &&
                   json_is_object(value)) {
            const char *inner;
            json_t *limit;
            json_object_foreach(value, inner, limit)
            {
                if (ok)
                    ok = check_entry(c, key, inner, limit);
            }
        } else if (strcmp(key, "members") == 0 || strcmp(key, "max_class") == 0 ||
                   strcmp(key, "offsets") == 0 || strcmp(key, "within") == 0) {
            probe_fail(c->error, c->error_size, "baseline: %s of %s must be an object", key,
                       c->t->name);
            return false;
        } else {
            probe_fail(c->error, c->error_size,
                       "baseline: unknown rule '%s' for %s (size, max_size, max_class, offsets, "
                       "members, within, max_holes, pin)",
                       key, c->t->name);
            return false;
        }
        if (!ok)
            return false;
    }
    return true;
}

/* "functions": {"PATTERN": {"max_code_size": N}}: the code size of the functions matching
 * PATTERN (with their compiler clones) must not exceed N bytes. */
static enum gate_status check_functions(const char *binary, const char *baseline, json_t *functions,
                                        struct gate_report *r, char *error, size_t size)
{
    const char **patterns = calloc(json_object_size(functions) + 1, sizeof *patterns);
    size_t n = 0;
    const char *pattern;
    json_t *rules;
    if (patterns == NULL) {
        probe_fail(error, size, "out of memory");
        return GATE_INPUT_ERROR;
    }
    json_object_foreach(functions, pattern, rules) patterns[n++] = pattern;
    struct function_set set;
    bool has_dwarf;
    enum gate_status status = GATE_PASSED;
    if (functions_read(binary, NULL, patterns, n, &set, &has_dwarf, error, size) != LAYOUT_OK)
        status = GATE_INPUT_ERROR;
    json_object_foreach(functions, pattern, rules)
    {
        if (status != GATE_PASSED)
            break;
        json_t *limit = json_object_get(rules, "max_code_size");
        uint64_t code_size;
        if (!json_is_object(rules) || json_object_size(rules) != 1 || !json_is_integer(limit) ||
            json_integer_value(limit) < 0) {
            probe_fail(error, size, "%s: the rules of function '%s' must be {\"max_code_size\": N}",
                       baseline, pattern);
            status = GATE_INPUT_ERROR;
        } else if (!functions_code_size(&set, pattern, &code_size)) {
            probe_fail(error, size, "%s names function '%s', which %s does not define", baseline,
                       pattern, binary);
            status = GATE_INPUT_ERROR;
        } else {
            long long want = json_integer_value(limit);
            struct subject s = {"function", pattern, NULL, 0, ""};
            if (code_size > (uint64_t)want)
                record(r, &s, "max_code_size", false, "code size %" PRIu64 " > %lld (%+lld B)",
                       code_size, want, (long long)code_size - want);
            else
                record(r, &s, "max_code_size", false, NULL);
            r->functions_checked++;
        }
    }
    functions_free(&set);
    free(patterns);
    return status;
}

static json_t *load_baseline(const char *baseline, char *error, size_t error_size)
{
    json_error_t jerr;
    json_t *doc = json_load_file(baseline, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL) {
        /* jansson says -1:-1 when the file could not be read at all: no position to give. */
        if (jerr.line < 0)
            probe_fail(error, error_size, "%s: %s", baseline, jerr.text);
        else
            probe_fail(error, error_size, "%s:%d:%d: %s", baseline, jerr.line, jerr.column,
                       jerr.text);
        return NULL;
    }
    const char *format = json_string_value(json_object_get(doc, "format"));
    json_t *types = json_object_get(doc, "types"), *functions = json_object_get(doc, "functions");
    if (format == NULL || strcmp(format, "qaudit-baseline/1") != 0 ||
        (!json_is_object(types) && !json_is_object(functions))) {
        probe_fail(error, error_size,
                   "%s: not a qaudit-baseline/1 file (\"format\", and \"types\" or \"functions\")",
                   baseline);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

enum gate_status gate_check(const struct layout_set *set, const char *baseline, unsigned cacheline,
                            struct gate_report *report, char *error, size_t error_size)
{
    memset(report, 0, sizeof *report);
    json_t *doc = load_baseline(baseline, error, error_size);
    if (doc == NULL)
        return GATE_INPUT_ERROR;
    json_t *types = json_object_get(doc, "types"), *functions = json_object_get(doc, "functions");
    const char *name;
    json_t *rules;
    enum gate_status status = GATE_PASSED;
    json_object_foreach(types, name, rules)
    {
        const struct layout_type *t = find_type(set, name);
        if (t == NULL) {
            probe_fail(error, error_size, "%s names '%s', which %s does not define", baseline, name,
                       set->binary);
            status = GATE_INPUT_ERROR;
            break;
        }
        struct check c = {t,         {t->kind, t->name, t->decl_file, t->decl_line, ""},
                          cacheline, report,
                          error,     error_size};
        if (!json_is_object(rules)) {
            probe_fail(error, error_size, "%s: the rules of '%s' must be an object", baseline,
                       name);
            status = GATE_INPUT_ERROR;
            break;
        }
        if (!check_type(&c, rules)) {
            status = GATE_INPUT_ERROR;
            break;
        }
        report->types_checked++;
    }
    if (status == GATE_PASSED && json_is_object(functions))
        status = check_functions(set->binary, baseline, functions, report, error, error_size);
    json_decref(doc);
    if (status == GATE_PASSED && report->broken_count > 0)
        status = GATE_BROKEN;
    return status;
}

void gate_report_free(struct gate_report *r)
{
    for (size_t i = 0; i < r->rule_count; i++) {
        free(r->rules[i].type);
        free(r->rules[i].rule);
        free(r->rules[i].message);
        free(r->rules[i].file);
    }
    free(r->rules);
    memset(r, 0, sizeof *r);
}
