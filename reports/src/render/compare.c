/* The compare table: layouts from each build's DWARF, depth-one figures from its dump. Markdown
 * and JSON keep a row per build with every column; the text is transposed (a column per build)
 * and wrapped so that it fits 100 columns. */
#include "reports/compare.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports_render.h"
#include "probe/layout.h"
#include "probe/type_match.h"

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
        if (layout_type_matches(&set, &set.types[i], connection)) /* a typedef's name too */
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
                probe_class_of((enum allocator)a, t->size ? t->size : 1, &c) ? c.reserved : 0;
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
                         probe_class_models[a].name, row->classes[a]);
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
            json_object_set_new(classes, probe_class_models[a].name,
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

/* Markdown keeps the table as wide as it is: a row per build, every column. */
static void render_wide_markdown(FILE *out, const struct compare_row *rows, size_t count)
{
    struct document d = {0};
    report_doc_table(&d, (const char *const[]){"version", "queue object", "connection object",
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
        report_doc_row(&d,
                       (const char *const[]){r->label, queue, connection, classes, allocs, bytes});
    }
    report_render_markdown(out, &d);
    report_doc_free(&d);
}

/* The text fits a terminal of TEXT_WIDTH columns: transposed, a row per figure and a column per
 * build, the builds wrapped into as many tables as it takes (render_text's layout: two spaces
 * before the table and between columns). */
#define TEXT_WIDTH 100
#define FIGURES (4 + ALLOC_COUNT)
#define CELL_SIZE 40

static const char *figure_label(int figure, char *buf, size_t size)
{
    static const char *const fixed[] = {"queue object", "connection object"};
    if (figure < 2)
        return fixed[figure];
    if (figure < 2 + ALLOC_COUNT) {
        snprintf(buf, size, "class under %s", probe_class_models[figure - 2].name);
        return buf;
    }
    return figure == 2 + ALLOC_COUNT ? "allocs/connection, depth 1" : "bytes/connection, depth 1";
}

/* A build's column: its label then one cell per figure. A depth-one cell without a connection
 * there is "-" (a note under the table says why), not the Markdown's sentence. */
static void text_column(const struct compare_row *r, char cells[FIGURES + 1][CELL_SIZE])
{
    snprintf(cells[0], CELL_SIZE, "%s", r->label);
    snprintf(cells[1], CELL_SIZE, "%" PRIu64 " B", r->queue_size);
    snprintf(cells[2], CELL_SIZE, "%" PRIu64 " B", r->connection_size);
    for (int a = 0; a < ALLOC_COUNT; a++)
        snprintf(cells[3 + a], CELL_SIZE, r->classes[a] ? "%" PRIu64 : "-", r->classes[a]);
    char *allocs = cells[3 + ALLOC_COUNT], *bytes = cells[4 + ALLOC_COUNT];
    depth_one_cells(r, allocs, bytes, CELL_SIZE);
    if (r->has_dump && r->depth_one_connections == 0)
        snprintf(allocs, CELL_SIZE, "-");
}

/* Words of text wrapped at TEXT_WIDTH; a word longer than a line is cut. */
static void print_wrapped(FILE *out, const char *text)
{
    size_t column = 0;
    while (*text) {
        size_t word = strcspn(text, " ");
        if (column > 0 && column + 1 + word > TEXT_WIDTH) {
            fputc('\n', out);
            column = 0;
        }
        if (column > 0) {
            fputc(' ', out);
            column++;
        }
        for (size_t i = 0; i < word; i++, column++) {
            if (column == TEXT_WIDTH) {
                fputc('\n', out);
                column = 0;
            }
            fputc(text[i], out);
        }
        text += word;
        text += strspn(text, " ");
    }
    if (column > 0)
        fputc('\n', out);
}

/* One table of the builds first..last-1. */
static void text_table(FILE *out, char (*columns)[FIGURES + 1][CELL_SIZE], size_t first,
                       size_t last)
{
    struct document d = {0};
    const char *cells[TEXT_WIDTH];
    char label[CELL_SIZE];
    cells[0] = "";
    for (size_t i = first; i < last; i++)
        cells[1 + i - first] = columns[i][0];
    cells[1 + last - first] = NULL;
    report_doc_table(&d, cells);
    for (int f = 0; f < FIGURES; f++) {
        cells[0] = figure_label(f, label, sizeof label);
        for (size_t i = first; i < last; i++)
            cells[1 + i - first] = columns[i][1 + f];
        report_doc_row(&d, cells);
    }
    report_render_text(out, &d);
    report_doc_free(&d);
}

static size_t column_width(char cells[FIGURES + 1][CELL_SIZE])
{
    size_t width = 0;
    for (int f = 0; f <= FIGURES; f++)
        width = strlen(cells[f]) > width ? strlen(cells[f]) : width;
    return width;
}

static void render_text_columns(FILE *out, const struct compare_row *rows, size_t count)
{
    char(*columns)[FIGURES + 1][CELL_SIZE] = calloc(count + 1, sizeof *columns);
    if (columns == NULL)
        return;
    size_t label_width = 0;
    char label[CELL_SIZE];
    for (int f = 0; f < FIGURES; f++)
        label_width = strlen(figure_label(f, label, sizeof label)) > label_width
                          ? strlen(figure_label(f, label, sizeof label))
                          : label_width;
    bool cut = false, no_depth_one = false;
    for (size_t i = 0; i < count; i++) {
        text_column(&rows[i], columns[i]);
        /* A label too long for a column of its own is cut; the full names follow. */
        size_t room = TEXT_WIDTH - 2 - label_width - 2;
        room = room < CELL_SIZE - 1 ? room : CELL_SIZE - 1;
        if (strlen(rows[i].label) > room) {
            snprintf(columns[i][0] + room - 3, 4, "...");
            cut = true;
        }
        no_depth_one |= rows[i].has_dump && rows[i].depth_one_connections == 0;
    }
    for (size_t first = 0; first < count;) {
        size_t width = 2 + label_width, last = first;
        while (last < count &&
               (last == first || width + 2 + column_width(columns[last]) <= TEXT_WIDTH))
            width += 2 + column_width(columns[last++]);
        if (first > 0)
            fputc('\n', out);
        text_table(out, columns, first, last);
        first = last;
    }
    print_wrapped(out, "Depth 1: the connections whose queue never held more than one value, in "
                       "the dump given after the build (--dump), their allocations and heap "
                       "bytes divided by their number.");
    if (no_depth_one)
        print_wrapped(out, "-: the build's dump has no connection at depth one.");
    for (size_t i = 0; cut && i < count; i++) {
        char line[4096];
        snprintf(line, sizeof line, "build %zu: %s", i + 1, rows[i].label);
        print_wrapped(out, line);
    }
    free(columns);
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
    if (format == REPORT_MARKDOWN)
        render_wide_markdown(out, rows, count);
    else
        render_text_columns(out, rows, count);
}

void compare_rows_free(struct compare_row *rows, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(rows[i].label);
        free(rows[i].queue_type);
    }
}
