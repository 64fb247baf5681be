/* Building the block list of a report, and the number formats every renderer shares. */
#include "common/grow_array.h"
#include "reports_document.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "reports/render.h"

static struct block *add_block(struct document *d, enum block_kind kind)
{
    struct block *b = array_push(&d->blocks, &d->count, &d->capacity, sizeof *b);
    if (b != NULL) {
        b->kind = kind;
        b->html_replaced = d->html_replacing;
    }
    return b;
}

static struct block *last_block(struct document *d, enum block_kind kind)
{
    if (d->count == 0 || d->blocks[d->count - 1].kind != kind)
        return NULL;
    return &d->blocks[d->count - 1];
}

static char *vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        return NULL;
    return s;
}

void report_doc_heading(struct document *d, int level, const char *fmt, ...)
{
    struct block *b = add_block(d, BLOCK_HEADING);
    if (b == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    b->level = level;
    b->text = vformat(fmt, ap);
    va_end(ap);
}

void report_doc_paragraph(struct document *d, const char *fmt, ...)
{
    struct block *b = add_block(d, BLOCK_PARAGRAPH);
    if (b == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    b->text = vformat(fmt, ap);
    va_end(ap);
}

/* A copy of a cell's text on one line: a cell is one line in every format, and a command such
 * as `python3 -c "..."` brings its newlines and tabs along (they broke the dump table's rows). */
static char *one_line(const char *text)
{
    char *copy = strdup(text ? text : "");
    for (char *c = copy; c != NULL && *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
    return copy;
}

static void table_add_row(struct table *t, const char *const *cells)
{
    if (!array_reserve(&t->cells, &t->cell_capacity, (t->rows + 1) * t->columns, sizeof *t->cells))
        return;
    for (size_t c = 0; c < t->columns; c++)
        t->cells[t->rows * t->columns + c] = one_line(cells[c]);
    t->rows++;
}

void report_doc_table(struct document *d, const char *const *header)
{
    struct block *b = add_block(d, BLOCK_TABLE);
    if (b == NULL)
        return;
    while (header[b->table.columns] != NULL)
        b->table.columns++;
    table_add_row(&b->table, header);
}

void report_doc_row(struct document *d, const char *const *cells)
{
    struct block *b = last_block(d, BLOCK_TABLE);
    if (b != NULL)
        table_add_row(&b->table, cells);
}

void report_doc_chart(struct document *d, const char *title, const char *unit, bool illustrates)
{
    struct block *b = add_block(d, BLOCK_CHART);
    if (b == NULL)
        return;
    b->illustrates = illustrates;
    b->text = strdup(title);
    b->chart.unit = strdup(unit);
}

void report_doc_bar(struct document *d, const char *label, double value)
{
    struct block *b = last_block(d, BLOCK_CHART);
    if (b == NULL)
        return;
    struct chart *c = &b->chart;
    if (!array_reserve(&c->labels, &c->label_capacity, c->count + 1, sizeof *c->labels) ||
        !array_reserve(&c->values, &c->value_capacity, c->count + 1, sizeof *c->values))
        return;
    c->labels[c->count] = strdup(label);
    c->values[c->count++] = value;
}

void report_doc_chart_axis(struct document *d, const char *axis)
{
    struct block *b = last_block(d, BLOCK_CHART);
    if (b != NULL && b->chart.axis == NULL)
        b->chart.axis = strdup(axis);
}

void report_doc_html_view(struct document *d, enum html_view view, size_t arg)
{
    if (d->count == 0)
        return;
    d->blocks[d->count - 1].view = view;
    d->blocks[d->count - 1].view_arg = arg;
}

void report_doc_lines(struct document *d)
{
    add_block(d, BLOCK_LINES);
}

/* A line into the last block of kind (lines or list items). */
static void add_line(struct document *d, enum block_kind kind, const char *fmt, va_list ap)
{
    struct block *b = last_block(d, kind);
    char **slot = b ? array_push(&b->lines, &b->line_count, &b->line_capacity, sizeof *slot) : NULL;
    if (slot != NULL)
        *slot = vformat(fmt, ap);
}

void report_doc_line(struct document *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_line(d, BLOCK_LINES, fmt, ap);
    va_end(ap);
}

void report_doc_list(struct document *d, enum tone tone, const char *title)
{
    struct block *b = add_block(d, BLOCK_LIST);
    if (b == NULL)
        return;
    b->tone = tone;
    b->text = strdup(title);
}

void report_doc_item(struct document *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_line(d, BLOCK_LIST, fmt, ap);
    va_end(ap);
}

void report_doc_layout(struct document *d, const struct layout_type *layout)
{
    struct block *b = add_block(d, BLOCK_LAYOUT);
    if (b != NULL)
        b->layout = layout;
}

void report_doc_free(struct document *d)
{
    for (size_t i = 0; i < d->count; i++) {
        struct block *b = &d->blocks[i];
        free(b->text);
        for (size_t c = 0; c < b->table.rows * b->table.columns; c++)
            free(b->table.cells[c]);
        free(b->table.cells);
        for (size_t c = 0; c < b->chart.count; c++)
            free(b->chart.labels[c]);
        free(b->chart.labels);
        free(b->chart.values);
        free(b->chart.unit);
        free(b->chart.axis);
        for (size_t l = 0; l < b->line_count; l++)
            free(b->lines[l]);
        free(b->lines);
    }
    free(d->blocks);
    *d = (struct document){0};
}

bool report_table_numeric_column(const struct table *t, size_t column)
{
    for (size_t r = 1; r < t->rows; r++) {
        const char *cell = t->cells[r * t->columns + column];
        if (cell[0] == '~') /* an estimate */
            cell++;
        if ((cell[0] == '+' || cell[0] == '-') && cell[1] >= '0' && cell[1] <= '9')
            cell++; /* a change */
        if (cell[0] != '\0' && (cell[0] < '0' || cell[0] > '9'))
            return false;
    }
    return t->rows > 1;
}
