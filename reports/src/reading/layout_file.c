/* Reading qaudit-layout/1 files back into the probe's layout structs, and picking types. */
#include "reports/layout_file.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "reports_reading.h"

static bool read_member(json_t *m, struct layout_member *out)
{
    json_t *name = json_object_get(m, "name"), *type = json_object_get(m, "type");
    json_t *offset = json_object_get(m, "offset"), *size = json_object_get(m, "size");
    if (!json_is_string(name) || !json_is_string(type) || !json_is_integer(offset) ||
        !json_is_integer(size) || json_integer_value(offset) < 0 || json_integer_value(size) < 0)
        return false;
    json_t *bit_offset = json_object_get(m, "bit_offset"),
           *bit_size = json_object_get(m, "bit_size");
    *out = (struct layout_member){
        .name = strdup(json_string_value(name)),
        .type = strdup(json_string_value(type)),
        .offset = (uint64_t)json_integer_value(offset),
        .size = (uint64_t)json_integer_value(size),
        .bit_offset = json_is_integer(bit_offset) ? json_integer_value(bit_offset) : -1,
        .bit_size = json_is_integer(bit_size) ? (uint32_t)json_integer_value(bit_size) : 0,
        .is_base = json_is_true(json_object_get(m, "base")),
        .depth = (uint8_t)json_integer_value(json_object_get(m, "depth")),
    };
    return true;
}

static const char *kind_of(const char *kind)
{
    static const char *const kinds[] = {"struct", "class", "union"};
    for (int i = 0; i < 3; i++)
        if (kind && strcmp(kind, kinds[i]) == 0)
            return kinds[i];
    return NULL;
}

static bool read_type(json_t *t, struct layout_type *out)
{
    json_t *name = json_object_get(t, "name"), *size = json_object_get(t, "size");
    json_t *align = json_object_get(t, "align"), *members = json_object_get(t, "members");
    const char *kind = kind_of(json_string_value(json_object_get(t, "kind")));
    if (!json_is_string(name) || kind == NULL || !json_is_integer(size) ||
        !json_is_integer(align) || !json_is_array(members) || json_integer_value(size) < 0)
        return false;
    *out = (struct layout_type){.name = strdup(json_string_value(name)),
                                .kind = kind,
                                .size = (uint64_t)json_integer_value(size),
                                .align = (uint64_t)json_integer_value(align),
                                .packed = json_is_true(json_object_get(t, "packed")),
                                .odr_conflict = json_is_true(json_object_get(t, "odr_conflict"))};
    out->members = calloc(json_array_size(members) + 1, sizeof *out->members);
    if (out->members == NULL)
        return false;
    size_t i;
    json_t *m;
    json_array_foreach(members, i, m)
    {
        if (!read_member(m, &out->members[i]))
            return false;
        out->member_count++;
    }
    layout_find_holes(out);
    return true;
}

enum report_status layout_file_read(const char *path, struct layout_set *out, char *error,
                                    size_t error_size)
{
    json_error_t jerr;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL) {
        snprintf(error, error_size, "%s: line %d, column %d: %s", path, jerr.line, jerr.column,
                 jerr.text);
        report_one_line(error);
        return REPORT_INPUT_ERROR;
    }
    const char *format = json_string_value(json_object_get(doc, "format"));
    json_t *types = json_object_get(doc, "types");
    enum report_status status = REPORT_OK;
    if (format == NULL || strcmp(format, "qaudit-layout/1") != 0 || !json_is_array(types)) {
        snprintf(error, error_size, "%s: not a qaudit-layout/1 file (format is '%s')", path,
                 format ? format : "missing");
        status = REPORT_INPUT_ERROR;
    }
    out->types =
        status == REPORT_OK ? calloc(json_array_size(types) + 1, sizeof *out->types) : NULL;
    out->binary = strdup(path);
    size_t i;
    json_t *t;
    json_array_foreach(types, i, t)
    {
        if (out->types == NULL || status != REPORT_OK)
            break;
        out->capacity = out->count + 1;
        if (!read_type(t, &out->types[out->count++])) {
            snprintf(error, error_size, "%s: types[%zu] lacks name, kind, size, align or members",
                     path, i);
            status = REPORT_INPUT_ERROR;
        }
    }
    json_decref(doc);
    return status;
}

enum report_status layout_select(const struct layout_set *set, const char *const *patterns,
                                 size_t pattern_count, const struct layout_type ***out,
                                 size_t *count, char *error, size_t error_size)
{
    *count = 0;
    *out = calloc(set->count + 1, sizeof **out);
    if (*out == NULL)
        return REPORT_INPUT_ERROR;
    for (size_t p = 0; p < pattern_count; p++) {
        size_t before = *count;
        for (size_t i = 0; i < set->count; i++) {
            bool taken = false;
            for (size_t j = 0; j < *count && !taken; j++)
                taken = (*out)[j] == &set->types[i];
            if (!taken && layout_name_matches(patterns[p], set->types[i].name))
                (*out)[(*count)++] = &set->types[i];
        }
        if (*count == before) {
            snprintf(error, error_size, "no struct, class or union matches '%s' in %s", patterns[p],
                     set->binary ? set->binary : "the layouts");
            return REPORT_INPUT_ERROR;
        }
    }
    return REPORT_OK;
}
