/* The compare table: layouts from each build's DWARF, depth-one figures from its dump. */
#include "reports/compare.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "document.h"
#include "probe/layout.h"

static const char *option_or(const char *value, const char *fallback)
{
    return value ? value : fallback;
}

static const struct layout_member *member_named(const struct layout_type *t, const char *name)
{
    for (size_t i = 0; i < t->member_count; i++)
        if (t->members[i].depth == 0 && strcmp(t->members[i].name, name) == 0)
            return &t->members[i];
    return NULL;
}

static enum report_status layout_row(const char *binary, const struct compare_options *o,
                                     struct compare_row *row, char *error, size_t size)
{
    struct layout_set set = {0};
    const char *connection = option_or(o->connection_type, "connection");
    struct layout_options read = {NULL, false, &connection, 1};
    if (layout_read(binary, &read, &set, error, size) != LAYOUT_OK)
        return REPORT_INPUT_ERROR;
    const char *queue = option_or(o->queue_member, "queue");
    const struct layout_type *t = NULL;
    for (size_t i = 0; i < set.count && t == NULL; i++)
        if (strcmp(set.types[i].name, connection) == 0)
            t = &set.types[i];
    const struct layout_member *m = t ? member_named(t, queue) : NULL;
    enum report_status status = REPORT_OK;
    if (t == NULL) {
        snprintf(error, size, "%s: no struct '%s' in its DWARF (--connection names it)", binary,
                 connection);
        status = REPORT_INPUT_ERROR;
    } else if (m == NULL) {
        snprintf(error, size, "%s: struct %s has no member '%s' (--queue-member names it)", binary,
                 connection, queue);
        status = REPORT_INPUT_ERROR;
    } else {
        row->connection_size = t->size;
        row->queue_size = m->size;
        row->queue_type = strdup(m->type);
        for (int a = 0; a < ALLOC_COUNT; a++) {
            struct size_class c;
            row->classes[a] =
                class_of((enum allocator)a, t->size ? t->size : 1, &c) ? c.reserved : 0;
        }
    }
    layout_free(&set);
    return status;
}

static enum report_status dump_row(const char *dump, struct compare_row *row, char *error,
                                   size_t size)
{
    struct report r = {0};
    enum report_status status = report_load(&dump, 1, &r, error, size);
    if (status == REPORT_OK) {
        row->has_dump = true;
        const struct report_peak *one = report_peak_at(&r.queues, 1);
        if (one != NULL && one->connections > 0) {
            row->depth_one_connections = one->connections;
            row->allocs_per_connection = report_per_connection(one, one->allocs);
            row->bytes_per_connection = report_per_connection(one, one->bytes);
        }
    }
    report_free(&r);
    return status;
}

enum report_status compare_builds(const struct compare_build *builds, size_t count,
                                  const struct compare_options *options, struct compare_row *rows,
                                  char *error, size_t error_size)
{
    for (size_t i = 0; i < count; i++) {
        const char *slash = strrchr(builds[i].binary, '/');
        rows[i].label = strdup(slash ? slash + 1 : builds[i].binary);
        if (layout_row(builds[i].binary, options, &rows[i], error, error_size) != REPORT_OK)
            return REPORT_INPUT_ERROR;
        if (builds[i].dump && dump_row(builds[i].dump, &rows[i], error, error_size) != REPORT_OK)
            return REPORT_INPUT_ERROR;
    }
    return REPORT_OK;
}

static void classes_cell(const struct compare_row *row, char *out, size_t size)
{
    size_t used = 0;
    for (int a = 0; a < ALLOC_COUNT && used < size; a++) {
        int n = snprintf(out + used, size - used, "%s%s %" PRIu64, a ? ", " : "",
                         class_models[a].name, row->classes[a]);
        used += n > 0 ? (size_t)n : 0;
    }
}

static void depth_one_cells(const struct compare_row *row, char *allocs, char *bytes, size_t size)
{
    if (!row->has_dump) {
        snprintf(allocs, size, "(no dump)");
        snprintf(bytes, size, "(no dump)");
    } else if (row->depth_one_connections == 0) {
        snprintf(allocs, size, "(no connection at depth one)");
        snprintf(bytes, size, "-");
    } else {
        snprintf(allocs, size, "%.2f", row->allocs_per_connection);
        snprintf(bytes, size, "%.1f", row->bytes_per_connection);
    }
}

static json_t *rows_json(const struct compare_row *rows, size_t count)
{
    json_t *list = json_array();
    for (size_t i = 0; i < count; i++) {
        const struct compare_row *r = &rows[i];
        json_t *classes = json_object();
        for (int a = 0; a < ALLOC_COUNT; a++)
            json_object_set_new(classes, class_models[a].name,
                                r->classes[a] ? json_integer((json_int_t)r->classes[a])
                                              : json_null());
        json_t *row =
            json_pack("{s:s, s:s, s:I, s:I, s:o}", "version", r->label, "queue_type", r->queue_type,
                      "queue_object", (json_int_t)r->queue_size, "connection_object",
                      (json_int_t)r->connection_size, "classes", classes);
        bool known = r->has_dump && r->depth_one_connections > 0;
        json_object_set_new(row, "depth_one_connections",
                            r->has_dump ? json_integer((json_int_t)r->depth_one_connections)
                                        : json_null());
        json_object_set_new(row, "allocs_per_connection_at_depth_one",
                            known ? json_real(r->allocs_per_connection) : json_null());
        json_object_set_new(row, "extra_heap_bytes_at_depth_one",
                            known ? json_real(r->bytes_per_connection) : json_null());
        json_array_append_new(list, row);
    }
    return list;
}

void compare_render(FILE *out, const struct compare_row *rows, size_t count,
                    const struct compare_options *options, enum report_format format)
{
    if (format == REPORT_JSON) {
        json_t *doc =
            json_pack("{s:s, s:s, s:s, s:o}", "format", "qaudit-compare/1", "connection",
                      option_or(options->connection_type, "connection"), "queue_member",
                      option_or(options->queue_member, "queue"), "builds", rows_json(rows, count));
        json_dumpf(doc, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        fputc('\n', out);
        json_decref(doc);
        return;
    }
    /* The same table machinery as the reports: aligned text, or Markdown for a pull request. */
    struct document d = {0};
    doc_table(&d, (const char *const[]){"version", "queue object", "connection object",
                                        "allocation class (per allocator)",
                                        "allocations per connection at depth one",
                                        "extra heap bytes at depth one", NULL});
    for (size_t i = 0; i < count; i++) {
        const struct compare_row *r = &rows[i];
        char queue[32], connection[32], classes[160], allocs[64], bytes[64];
        snprintf(queue, sizeof queue, "%" PRIu64 " B", r->queue_size);
        snprintf(connection, sizeof connection, "%" PRIu64 " B", r->connection_size);
        classes_cell(r, classes, sizeof classes);
        depth_one_cells(r, allocs, bytes, sizeof allocs);
        doc_row(&d, (const char *const[]){r->label, queue, connection, classes, allocs, bytes});
    }
    if (format == REPORT_MARKDOWN)
        render_markdown(out, &d);
    else
        render_text(out, &d);
    doc_free(&d);
}

void compare_rows_free(struct compare_row *rows, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(rows[i].label);
        free(rows[i].queue_type);
    }
}
