/* The gate: reads a baseline (jansson), checks each rule against the layout, and reports every
 * broken rule on one line. */
#include "probe/gate.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "probe/classes.h"
#include "probe/functions.h"
#include "probe/render.h"

static void fail(char *error, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, size, fmt, ap);
    va_end(ap);
}

static const struct layout_type *find_type(const struct layout_set *set, const char *name)
{
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(set->types[i].name, name) == 0)
            return &set->types[i];
    return NULL;
}

static const struct layout_member *find_member(const struct layout_type *t, const char *name)
{
    for (size_t i = 0; i < t->member_count; i++)
        if (strcmp(t->members[i].name, name) == 0)
            return &t->members[i];
    return NULL;
}

/* Records a broken rule about "kind name" (a struct, class, union or function). */
static void vbroken(struct gate_report *r, const char *kind, const char *name, const char *rule,
                    const char *fmt, va_list ap)
{
    char message[512];
    int n = snprintf(message, sizeof message, "%s %s: ", kind, name);
    vsnprintf(message + n, sizeof message - (size_t)n, fmt, ap);
    struct gate_finding *grown = realloc(r->broken, (r->broken_count + 1) * sizeof *grown);
    if (grown == NULL)
        return;
    r->broken = grown;
    r->broken[r->broken_count++] =
        (struct gate_finding){strdup(name), strdup(rule), strdup(message)};
}

static void broken(struct gate_report *r, const struct layout_type *t, const char *rule,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vbroken(r, t->kind, t->name, rule, fmt, ap);
    va_end(ap);
}

static void broken_function(struct gate_report *r, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vbroken(r, "function", name, "max_code_size", fmt, ap);
    va_end(ap);
}

static void add_checked_name(struct gate_report *r, const char *name)
{
    char **grown = realloc(r->type_names, (r->type_count + 1) * sizeof *grown);
    if (grown) {
        r->type_names = grown;
        r->type_names[r->type_count++] = strdup(name);
    }
}

static bool integer(json_t *value, const char *what, const char *type, long long *out, char *error,
                    size_t size)
{
    if (!json_is_integer(value) || json_integer_value(value) < 0) {
        fail(error, size, "baseline: %s of %s must be a non-negative integer", what, type);
        return false;
    }
    *out = json_integer_value(value);
    return true;
}

static int allocator_named(const char *name)
{
    for (int a = 0; a < ALLOC_COUNT; a++)
        if (strcmp(class_models[a].name, name) == 0)
            return a;
    return -1;
}

/* Checks the rules of one type; false on a baseline error (then error is set). */
static bool check_type(const struct layout_type *t, json_t *rules, unsigned cacheline,
                       struct gate_report *r, char *error, size_t size)
{
    const char *key;
    json_t *value;
    json_object_foreach(rules, key, value)
    {
        long long want;
        if (!json_is_object(value))
            r->rules_checked++; /* an object's rules are counted one by one below */
        if (strcmp(key, "size") == 0 || strcmp(key, "max_size") == 0) {
            if (!integer(value, key, t->name, &want, error, size))
                return false;
            bool exact = key[0] == 's';
            if (exact ? t->size != (uint64_t)want : t->size > (uint64_t)want)
                broken(r, t, key, "size %" PRIu64 " %s %lld (%+lld B)", t->size, exact ? "!=" : ">",
                       want, (long long)t->size - want);
        } else if (strcmp(key, "max_holes") == 0) {
            if (!integer(value, key, t->name, &want, error, size))
                return false;
            if (t->byte_holes > (uint64_t)want)
                broken(r, t, key, "%zu holes > %lld (%" PRIu64 " B in holes)", t->byte_holes, want,
                       t->hole_bytes);
        } else if (strcmp(key, "max_class") == 0 || strcmp(key, "offsets") == 0 ||
                   strcmp(key, "within") == 0) {
            if (!json_is_object(value)) {
                fail(error, size, "baseline: %s of %s must be an object", key, t->name);
                return false;
            }
            const char *inner;
            json_t *limit;
            json_object_foreach(value, inner, limit)
            {
                char rule[256];
                snprintf(rule, sizeof rule, "%s.%s", key, inner);
                r->rules_checked++;
                if (!integer(limit, rule, t->name, &want, error, size))
                    return false;
                if (key[0] == 'm') {
                    int a = allocator_named(inner);
                    struct size_class c;
                    if (a < 0) {
                        fail(error, size,
                             "baseline: unknown allocator '%s' in %s (glibc, "
                             "mimalloc, jemalloc, tcmalloc)",
                             inner, t->name);
                        return false;
                    }
                    class_of((enum allocator)a, t->size ? t->size : 1, &c);
                    if (c.reserved > (uint64_t)want)
                        broken(r, t, rule, "%s class %" PRIu64 " > %lld (size %" PRIu64 ")", inner,
                               c.reserved, want, t->size);
                    continue;
                }
                const struct layout_member *m = find_member(t, inner);
                if (m == NULL) { /* a member the baseline pins is gone: that is a regression */
                    broken(r, t, rule, "member %s is gone (the baseline pins it)", inner);
                    continue;
                }
                if (key[0] == 'o' && m->offset != (uint64_t)want)
                    broken(r, t, rule, "%s at offset %" PRIu64 ", pinned at %lld (%+lld B)", inner,
                           m->offset, want, (long long)m->offset - want);
                if (key[0] == 'w') {
                    uint64_t first = m->offset / cacheline;
                    uint64_t last = (m->offset + (m->size ? m->size : 1) - 1) / cacheline;
                    if (first != (uint64_t)want || last != (uint64_t)want)
                        broken(r, t, rule,
                               "%s spans cache lines %" PRIu64 "-%" PRIu64
                               ", must stay in line %lld",
                               inner, first, last, want);
                }
            }
        } else {
            fail(error, size,
                 "baseline: unknown rule '%s' for %s (size, max_size, max_class, offsets, within, "
                 "max_holes)",
                 key, t->name);
            return false;
        }
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
            fail(error, size, "%s: the rules of function '%s' must be {\"max_code_size\": N}",
                 baseline, pattern);
            status = GATE_INPUT_ERROR;
        } else if (!functions_code_size(&set, pattern, &code_size)) {
            fail(error, size, "%s names function '%s', which %s does not define", baseline, pattern,
                 binary);
            status = GATE_INPUT_ERROR;
        } else {
            long long want = json_integer_value(limit);
            r->rules_checked++;
            if (code_size > (uint64_t)want)
                broken_function(r, pattern, "code size %" PRIu64 " > %lld (%+lld B)", code_size,
                                want, (long long)code_size - want);
            add_checked_name(r, pattern);
            r->functions_checked++;
        }
    }
    functions_free(&set);
    free(patterns);
    return status;
}

enum gate_status gate_check(const struct layout_set *set, const char *baseline, unsigned cacheline,
                            struct gate_report *report, char *error, size_t error_size)
{
    memset(report, 0, sizeof *report);
    json_error_t jerr;
    json_t *doc = json_load_file(baseline, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL) {
        /* jansson says -1:-1 when the file could not be read at all: no position to give. */
        if (jerr.line < 0)
            fail(error, error_size, "%s: %s", baseline, jerr.text);
        else
            fail(error, error_size, "%s:%d:%d: %s", baseline, jerr.line, jerr.column, jerr.text);
        return GATE_INPUT_ERROR;
    }
    json_t *types = json_object_get(doc, "types");
    json_t *functions = json_object_get(doc, "functions");
    const char *format = json_string_value(json_object_get(doc, "format"));
    if (format == NULL || strcmp(format, "qaudit-baseline/1") != 0 ||
        (!json_is_object(types) && !json_is_object(functions))) {
        fail(error, error_size,
             "%s: not a qaudit-baseline/1 file (\"format\", and \"types\" or \"functions\")",
             baseline);
        json_decref(doc);
        return GATE_INPUT_ERROR;
    }
    const char *name;
    json_t *rules;
    enum gate_status status = GATE_PASSED;
    json_object_foreach(types, name, rules)
    {
        const struct layout_type *t = find_type(set, name);
        if (t == NULL) {
            fail(error, error_size, "%s names '%s', which %s does not define", baseline, name,
                 set->binary);
            status = GATE_INPUT_ERROR;
            break;
        }
        if (!json_is_object(rules) || !check_type(t, rules, cacheline, report, error, error_size)) {
            if (!json_is_object(rules))
                fail(error, error_size, "%s: the rules of '%s' must be an object", baseline, name);
            status = GATE_INPUT_ERROR;
            break;
        }
        report->types_checked++;
        add_checked_name(report, name);
    }
    if (status == GATE_PASSED && json_is_object(functions))
        status = check_functions(set->binary, baseline, functions, report, error, error_size);
    json_decref(doc);
    if (status == GATE_PASSED && report->broken_count > 0)
        status = GATE_BROKEN;
    return status;
}

/* {"PATTERN": {"max_code_size": today's size}} for each pattern; NULL (error set) when one
 * matches no function. */
static json_t *code_size_rules(const char *binary, char **patterns, size_t n, char *error,
                               size_t size)
{
    struct function_set set;
    bool has_dwarf;
    if (functions_read(binary, NULL, (const char *const *)patterns, n, &set, &has_dwarf, error,
                       size) != LAYOUT_OK)
        return NULL;
    json_t *rules = json_object();
    for (size_t i = 0; i < n && rules != NULL; i++) {
        uint64_t code_size;
        if (!functions_code_size(&set, patterns[i], &code_size)) {
            fail(error, size, "no function of %s matches '%s'", binary, patterns[i]);
            json_decref(rules);
            rules = NULL;
            break;
        }
        json_object_set_new(rules, patterns[i],
                            json_pack("{s:I}", "max_code_size", (json_int_t)code_size));
    }
    functions_free(&set);
    return rules;
}

enum gate_status gate_write_baseline(const struct layout_set *set, char **patterns, size_t n,
                                     char **functions, size_t function_count, const char *path,
                                     char *error, size_t error_size)
{
    json_t *types = json_object();
    size_t written = 0;
    for (size_t i = 0; i < set->count; i++) {
        const struct layout_type *t = &set->types[i];
        bool wanted = false;
        for (size_t p = 0; p < n && !wanted; p++)
            wanted = layout_name_matches(patterns[p], t->name);
        if (!wanted || t->odr_conflict)
            continue;
        json_t *classes = json_object(), *offsets = json_object();
        for (int a = 0; a < ALLOC_COUNT; a++) {
            struct size_class c;
            class_of((enum allocator)a, t->size ? t->size : 1, &c);
            json_object_set_new(classes, class_models[a].name,
                                json_integer((json_int_t)c.reserved));
        }
        for (size_t m = 0; m < t->member_count; m++)
            if (t->members[m].name[0] && !t->members[m].is_base)
                json_object_set_new(offsets, t->members[m].name,
                                    json_integer((json_int_t)t->members[m].offset));
        json_object_set_new(types, t->name,
                            json_pack("{s:I, s:o, s:o, s:I}", "size", (json_int_t)t->size,
                                      "max_class", classes, "offsets", offsets, "max_holes",
                                      (json_int_t)t->byte_holes));
        written++;
    }
    if (written == 0 && n > 0) {
        fail(error, error_size, "no type of %s matches the --type patterns", set->binary);
        json_decref(types);
        return GATE_INPUT_ERROR;
    }
    json_t *doc = json_pack("{s:s, s:s, s:o}", "format", "qaudit-baseline/1", "binary", set->binary,
                            "types", types);
    if (function_count > 0) {
        json_t *rules = code_size_rules(set->binary, functions, function_count, error, error_size);
        if (rules == NULL) {
            json_decref(doc);
            return GATE_INPUT_ERROR;
        }
        json_object_set_new(doc, "functions", rules);
    }
    int rc = json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (rc != 0) {
        fail(error, error_size, "cannot write %s", path);
        return GATE_INPUT_ERROR;
    }
    return GATE_PASSED;
}

void gate_print_text(FILE *out, const struct gate_report *r)
{
    for (size_t i = 0; i < r->broken_count; i++)
        fprintf(out, "%s\n", r->broken[i].message);
    fprintf(out, "qaudit gate: %zu rule%s broken, %zu checked, %zu type%s", r->broken_count,
            r->broken_count == 1 ? "" : "s", r->rules_checked, r->types_checked,
            r->types_checked == 1 ? "" : "s");
    if (r->functions_checked > 0)
        fprintf(out, ", %zu function%s", r->functions_checked,
                r->functions_checked == 1 ? "" : "s");
    fputc('\n', out);
}

void gate_print_github(FILE *out, const struct gate_report *r)
{
    for (size_t i = 0; i < r->broken_count; i++)
        fprintf(out, "::error title=qaudit gate (%s)::%s\n", r->broken[i].rule,
                r->broken[i].message);
}

/* One testcase per type, one failure element per broken rule. */
bool gate_write_junit(const char *path, const struct gate_report *r)
{
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return false;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(out, "<testsuite name=\"qaudit gate\" tests=\"%zu\" failures=\"%zu\">\n", r->type_count,
            r->broken_count);
    for (size_t t = 0; t < r->type_count; t++) {
        fprintf(out, "  <testcase classname=\"qaudit.gate\" name=\"");
        xml_escape(out, r->type_names[t]);
        fprintf(out, "\">\n");
        for (size_t i = 0; i < r->broken_count; i++) {
            if (strcmp(r->broken[i].type, r->type_names[t]) != 0)
                continue;
            fprintf(out, "    <failure type=\"");
            xml_escape(out, r->broken[i].rule);
            fprintf(out, "\" message=\"");
            xml_escape(out, r->broken[i].message);
            fprintf(out, "\"/>\n");
        }
        fprintf(out, "  </testcase>\n");
    }
    fprintf(out, "</testsuite>\n");
    return fclose(out) == 0;
}

void gate_report_free(struct gate_report *r)
{
    for (size_t i = 0; i < r->broken_count; i++) {
        free(r->broken[i].type);
        free(r->broken[i].rule);
        free(r->broken[i].message);
    }
    for (size_t i = 0; i < r->type_count; i++)
        free(r->type_names[i]);
    free(r->broken);
    free(r->type_names);
    memset(r, 0, sizeof *r);
}
