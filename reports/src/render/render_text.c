/* The terminal rendering: aligned tables, bar charts of '#', stacks indented as they are. Every
 * line fits TEXT_WIDTH columns: paragraphs, list items and stack frames wrap, and a table too
 * wide gives its widest text column (where, detail) the room left, its cells wrapped in it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports_render.h"
#include "probe/layout_render.h"

#define TEXT_WIDTH 100

/* Whether the space at p[at] holds a figure to its unit: "12 %", "256 B", "1.50 MiB". */
static bool glued(const char *p, size_t at)
{
    static const char *const units[] = {"%", "B", "KiB", "MiB", "GiB", "TiB"};
    if (at == 0 || p[at - 1] < '0' || p[at - 1] > '9')
        return false;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        size_t n = strlen(units[i]);
        char after = p[at + 1 + n];
        if (strncmp(p + at + 1, units[i], n) == 0 &&
            (after == '\0' || after == ' ' || after == ',' || after == '.' || after == ')' ||
             after == ';' || after == ':'))
            return true;
    }
    return false;
}

/* Splits text into lines of at most first (the first) and next (the others) columns, at spaces
 * (never between a figure and its unit); a word longer than a line after a '/', else anywhere. The
 * lines point into one allocation: free(lines[0]), then free(lines). */
static size_t wrap(const char *text, size_t first, size_t next, char ***lines)
{
    size_t length = strlen(text);
    char *copy = malloc(2 * length + 2); /* each cut may add a terminator */
    *lines = calloc(length + 2, sizeof **lines);
    if (copy == NULL || *lines == NULL) {
        free(copy);
        free(*lines);
        *lines = NULL;
        return 0;
    }
    size_t count = 0, used = 0;
    const char *p = text;
    do {
        size_t width = count == 0 ? first : next;
        width = width > 0 ? width : 1;
        size_t take = strlen(p);
        if (take > width) {
            take = width; /* the last space that fits, not one inside "12 %" or "1.5 MiB" */
            while (take > 0 && (p[take] != ' ' || glued(p, take)))
                take--;
            for (size_t slash = width; take == 0 && slash > 1; slash--)
                if (p[slash - 1] == '/') /* a path: after its last '/' that fits */
                    take = slash;
            if (take == 0) /* one word longer than the line */
                take = width;
        }
        (*lines)[count++] = copy + used;
        memcpy(copy + used, p, take);
        used += take;
        copy[used++] = '\0';
        p += take;
        while (*p == ' ')
            p++;
    } while (*p != '\0');
    return count;
}

static void free_lines(char **lines)
{
    if (lines != NULL)
        free(lines[0]);
    free(lines);
}

/* prefix, then text wrapped after it; later lines indented by next columns. */
static void print_wrapped(FILE *out, const char *prefix, const char *text, size_t next)
{
    char **lines;
    size_t n = wrap(text, TEXT_WIDTH - strlen(prefix), TEXT_WIDTH - next, &lines);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%*s%s\n", i == 0 ? 0 : (int)next, i == 0 ? prefix : "", lines[i]);
    free_lines(lines);
}

/* The width of each column; a table too wide narrows its widest text column a column at a time
 * (so two wide ones share what is left), none below 16. */
static void column_widths(const struct table *t, size_t columns, size_t *width)
{
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < columns; c++) {
            size_t n = strlen(t->cells[r * t->columns + c]);
            width[c] = n > width[c] ? n : width[c];
        }
    size_t total = 2;
    for (size_t c = 0; c < columns; c++)
        total += width[c] + (c + 1 < columns ? 2 : 0);
    while (total > TEXT_WIDTH) {
        size_t widest = columns;
        for (size_t c = 0; c < columns; c++)
            if (!report_table_numeric_column(t, c) && width[c] > 16 &&
                (widest == columns || width[c] >= width[widest]))
                widest = c;
        if (widest == columns)
            return; /* nothing left to narrow: the table stays wide */
        width[widest]--;
        total--;
    }
}

static void print_row(FILE *out, const struct table *t, size_t r, size_t columns,
                      const size_t *width)
{
    char **lines[16] = {0};
    size_t count[16] = {0}, height = 1;
    for (size_t c = 0; c < columns; c++) {
        count[c] = wrap(t->cells[r * t->columns + c], width[c], width[c], &lines[c]);
        height = count[c] > height ? count[c] : height;
    }
    for (size_t l = 0; l < height; l++) {
        size_t pending = 0; /* spaces owed before the next cell: trailing blanks never printed */
        fputs("  ", out);
        for (size_t c = 0; c < columns; c++) {
            const char *cell = l < count[c] ? lines[c][l] : "";
            size_t n = strlen(cell), pad = width[c] > n ? width[c] - n : 0;
            bool right = r > 0 && report_table_numeric_column(t, c);
            if (n == 0) {
                pending += width[c] + 2;
                continue;
            }
            fprintf(out, "%*s%s", (int)(pending + (right ? pad : 0)), "", cell);
            pending = (right ? 0 : pad) + 2;
        }
        fputc('\n', out);
    }
    for (size_t c = 0; c < columns; c++)
        free_lines(lines[c]);
}

static void print_table(FILE *out, const struct table *t)
{
    size_t width[16] = {0};
    size_t columns = t->columns < 16 ? t->columns : 16;
    column_widths(t, columns, width);
    for (size_t r = 0; r < t->rows; r++) {
        print_row(out, t, r, columns, width);
        if (r > 0)
            continue;
        fputs("  ", out);
        for (size_t c = 0; c < columns; c++)
            for (size_t i = 0; i < width[c] + (c + 1 < columns ? 2 : 0); i++)
                fputc(i < width[c] ? '-' : ' ', out);
        fputc('\n', out);
    }
}

static void print_value(FILE *out, double v)
{
    char count[32];
    if (v == floor(v) && v >= 0 && v < 1e18)
        fputs(report_fmt_count(count, sizeof count, (unsigned long long)v), out);
    else
        fprintf(out, "%.2f", v);
}

static void print_chart(FILE *out, const char *title, const struct chart *c)
{
    double max = 0;
    size_t label_width = 0;
    for (size_t i = 0; i < c->count; i++) {
        max = c->values[i] > max ? c->values[i] : max;
        size_t n = strlen(c->labels[i]);
        label_width = n > label_width ? n : label_width;
    }
    fprintf(out, "%s (%s):\n", title, c->unit);
    for (size_t i = 0; i < c->count; i++) {
        int bar = max > 0 ? (int)lround(40.0 * c->values[i] / max) : 0;
        if (bar == 0 && c->values[i] > 0)
            bar = 1;
        fprintf(out, "  %*s | %.*s ", (int)label_width, c->labels[i], bar,
                "########################################");
        print_value(out, c->values[i]);
        fputc('\n', out);
    }
}

/* A stack frame's line keeps its indentation; what wraps goes four columns further in. */
static void print_line(FILE *out, const char *line)
{
    char prefix[TEXT_WIDTH / 2];
    size_t indent = strspn(line, " ");
    indent = indent < sizeof prefix - 3 ? indent : sizeof prefix - 3;
    snprintf(prefix, sizeof prefix, "  %.*s", (int)indent, line);
    print_wrapped(out, prefix, line + indent, indent + 6);
}

static void print_block(FILE *out, const struct document *d, const struct block *b)
{
    switch (b->kind) {
    case BLOCK_HEADING:
        if (b->level == 1)
            fprintf(out, "%s\n", b->text);
        else
            fprintf(out, "\n== %s\n", b->text);
        break;
    case BLOCK_PARAGRAPH:
        print_wrapped(out, "", b->text, 0);
        break;
    case BLOCK_TABLE:
        print_table(out, &b->table);
        break;
    case BLOCK_CHART:
        if (!b->illustrates && b->chart.count > 0)
            print_chart(out, b->text, &b->chart);
        break;
    case BLOCK_LINES:
        for (size_t l = 0; l < b->line_count; l++)
            print_line(out, b->lines[l]);
        break;
    case BLOCK_LIST:
        fprintf(out, "%s:\n", b->text);
        for (size_t l = 0; l < b->line_count; l++)
            print_wrapped(out, "  - ", b->lines[l], 4);
        break;
    case BLOCK_LAYOUT:
        layout_print_text(out, b->layout, d->cacheline);
        break;
    }
}

void report_render_text(FILE *out, const struct document *d)
{
    for (size_t i = 0; i < d->count; i++)
        print_block(out, d, &d->blocks[i]);
}
