/* --write-baseline: today's layouts as rules (exact, max or class, per type), written into a new
 * baseline or merged into an existing one, which keeps what it says about everything else. */
#include "probe/gate.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/baseline_file.h"
#include "probe_gate.h"
#include "probe/classes.h"
#include "probe/functions.h"
#include "probe/type_match.h"

static const char *const pin_words[] = {NULL, "exact", "max", "class"};

static uint64_t class_for(int allocator, uint64_t size)
{
    struct size_class c;
    probe_class_of((enum allocator)allocator, size ? size : 1, &c);
    return c.reserved;
}

static json_t *classes_json(const struct layout_type *t)
{
    json_t *classes = json_object();
    for (int a = 0; a < ALLOC_COUNT; a++)
        json_object_set_new(classes, probe_class_models[a].name,
                            json_integer((json_int_t)class_for(a, t->size)));
    return classes;
}

/* The rules of one pin: exact pins everything, max the size and classes, class the classes; all
 * keep today's members, which explain a failure (and under exact are rules themselves). */
static json_t *pinned_rules(const struct layout_type *t, enum gate_pin pin)
{
    json_t *rules = json_pack("{s:s}", "pin", pin_words[pin]);
    if (pin == GATE_PIN_EXACT)
        json_object_set_new(rules, "size", json_integer((json_int_t)t->size));
    if (pin == GATE_PIN_MAX)
        json_object_set_new(rules, "max_size", json_integer((json_int_t)t->size));
    json_object_set_new(rules, "max_class", classes_json(t));
    json_object_set_new(rules, "members", probe_gate_members_json(t));
    if (pin == GATE_PIN_EXACT)
        json_object_set_new(rules, "max_holes", json_integer((json_int_t)t->byte_holes));
    return rules;
}

/* value, raised to today's when today's is larger (a "max" rule accepts what grew). */
static void raise_to(json_t *rules, const char *key, uint64_t today)
{
    json_t *value = json_object_get(rules, key);
    if (json_is_integer(value) && (uint64_t)json_integer_value(value) < today)
        json_object_set_new(rules, key, json_integer((json_int_t)today));
}

/* A hand-written entry (no "pin") keeps its rules, each set to what today's layout satisfies:
 * a pinned member that is gone loses its rule, and a member that now spans two cache lines keeps
 * its within rule (it cannot be accepted: move it, or remove the rule). */
static void refresh_rules(json_t *rules, const struct layout_type *t, unsigned cacheline)
{
    if (json_object_get(rules, "size"))
        json_object_set_new(rules, "size", json_integer((json_int_t)t->size));
    raise_to(rules, "max_size", t->size);
    raise_to(rules, "max_holes", t->byte_holes);
    json_t *classes = json_object_get(rules, "max_class");
    for (int a = 0; a < ALLOC_COUNT && json_is_object(classes); a++)
        raise_to(classes, probe_class_models[a].name, class_for(a, t->size));
    if (json_is_object(json_object_get(rules, "members")))
        json_object_set_new(rules, "members", probe_gate_members_json(t));
    const char *keys[] = {"offsets", "within"};
    for (int k = 0; k < 2; k++) {
        json_t *pins = json_object_get(rules, keys[k]);
        const char *name;
        json_t *value;
        void *tmp;
        if (!json_is_object(pins))
            continue;
        json_object_foreach_safe(pins, tmp, name, value)
        {
            const struct layout_member *m = probe_gate_find_member(t, name);
            uint64_t first = m ? m->offset / cacheline : 0;
            uint64_t last = m ? (m->offset + (m->size ? m->size : 1) - 1) / cacheline : 0;
            if (m == NULL)
                json_object_del(pins, name);
            else if (k == 0)
                json_object_set_new(pins, name, json_integer((json_int_t)m->offset));
            else if (first == last)
                json_object_set_new(pins, name, json_integer((json_int_t)first));
        }
    }
}

/* The baseline at path to update, or a new one (also for an empty file, as mkstemp leaves). */
static json_t *open_baseline(const char *path, const char *binary, char *error, size_t size)
{
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size == 0)
        return json_pack("{s:s, s:s, s:{}}", "format", "qaudit-baseline/1", "binary", binary,
                         "types");
    json_error_t jerr;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    const char *format = json_string_value(json_object_get(doc, "format"));
    if (doc == NULL || format == NULL || strcmp(format, "qaudit-baseline/1") != 0) {
        probe_fail(error, size, "%s exists and is not a qaudit-baseline/1 file: not overwritten",
                   path);
        json_decref(doc);
        return NULL;
    }
    if (!json_is_object(json_object_get(doc, "types")))
        json_object_set_new(doc, "types", json_object());
    return doc;
}

/* Rules for the types matching the patterns; false (error set) when none matches. */
static bool write_types(json_t *types, const struct layout_set *set, char **patterns, size_t n,
                        enum gate_pin pin, unsigned cacheline, char *error, size_t error_size)
{
    size_t written = 0;
    for (size_t i = 0; i < set->count; i++) {
        const struct layout_type *t = &set->types[i];
        bool wanted = false;
        for (size_t p = 0; p < n && !wanted; p++)
            wanted = layout_type_matches(set, t, patterns[p]);
        if (!wanted || t->odr_conflict)
            continue;
        written++;
        json_t *old = json_object_get(types, t->name);
        const char *old_pin = json_string_value(json_object_get(old, "pin"));
        enum gate_pin chosen = pin;
        if (chosen == GATE_PIN_KEEP && json_is_object(old) && old_pin == NULL) {
            refresh_rules(old, t, cacheline);
            continue;
        }
        if (chosen == GATE_PIN_KEEP && (old_pin == NULL || !gate_pin_parse(old_pin, &chosen)))
            chosen = GATE_PIN_EXACT;
        json_object_set_new(types, t->name, pinned_rules(t, chosen));
    }
    if (written == 0 && n > 0) {
        probe_fail(error, error_size, "no type of %s matches the --type patterns", set->binary);
        return false;
    }
    return true;
}

/* max_code_size of today for each pattern; false (error set) when one matches no function. */
static bool write_functions(json_t *doc, const char *binary, char **patterns, size_t n, char *error,
                            size_t size)
{
    struct function_set set;
    bool has_dwarf, ok = true;
    if (functions_read(binary, NULL, (const char *const *)patterns, n, &set, &has_dwarf, error,
                       size) != LAYOUT_OK) {
        functions_free(&set);
        return false;
    }
    json_t *rules = json_object_get(doc, "functions");
    if (!json_is_object(rules)) {
        rules = json_object();
        json_object_set_new(doc, "functions", rules);
    }
    for (size_t i = 0; i < n && ok; i++) {
        uint64_t code_size;
        ok = functions_code_size(&set, patterns[i], &code_size);
        if (!ok)
            probe_fail(error, size, "no function of %s matches '%s'", binary, patterns[i]);
        else
            json_object_set_new(rules, patterns[i],
                                json_pack("{s:I}", "max_code_size", (json_int_t)code_size));
    }
    functions_free(&set);
    return ok;
}

enum gate_status gate_write_baseline(const struct layout_set *set, char **patterns, size_t n,
                                     char **functions, size_t function_count, enum gate_pin pin,
                                     unsigned cacheline, const char *path, char *error,
                                     size_t error_size)
{
    json_t *doc = open_baseline(path, set->binary, error, error_size);
    if (doc == NULL)
        return GATE_INPUT_ERROR;
    if (json_object_get(doc, "binary") != NULL) /* a hand-written baseline may not say */
        json_object_set_new(doc, "binary", json_string(set->binary));
    bool ok = write_types(json_object_get(doc, "types"), set, patterns, n, pin, cacheline, error,
                          error_size) &&
              (function_count == 0 ||
               write_functions(doc, set->binary, functions, function_count, error, error_size)) &&
              baseline_file_save(doc, path, error, error_size);
    json_decref(doc);
    return ok ? GATE_PASSED : GATE_INPUT_ERROR;
}
