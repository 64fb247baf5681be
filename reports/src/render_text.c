/* The terminal rendering: aligned tables, bar charts of '#', stacks indented as they are. */
#include <math.h>
#include <string.h>

#include "document.h"
#include "probe/render.h"

static void print_table(FILE *out, const struct table *t)
{
    size_t width[16] = {0};
    size_t columns = t->columns < 16 ? t->columns : 16;
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < columns; c++) {
            size_t n = strlen(t->cells[r * t->columns + c]);
            width[c] = n > width[c] ? n : width[c];
        }
    for (size_t r = 0; r < t->rows; r++) {
        fputs("  ", out);
        for (size_t c = 0; c < columns; c++) {
            const char *cell = t->cells[r * t->columns + c];
            bool last = c + 1 == columns;
            if (table_numeric_column(t, c))
                fprintf(out, "%*s%s", (int)width[c], cell, last ? "" : "  ");
            else
                fprintf(out, "%-*s%s", last ? 0 : (int)width[c], cell, last ? "" : "  ");
        }
        fputc('\n', out);
        if (r == 0) {
            fputs("  ", out);
            for (size_t c = 0; c < columns; c++)
                for (size_t i = 0; i < width[c] + (c + 1 < columns ? 2 : 0); i++)
                    fputc(i < width[c] ? '-' : ' ', out);
            fputc('\n', out);
        }
    }
}

static void print_value(FILE *out, double v)
{
    if (v == floor(v))
        fprintf(out, "%.0f", v);
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

void render_text(FILE *out, const struct document *d)
{
    for (size_t i = 0; i < d->count; i++) {
        const struct block *b = &d->blocks[i];
        switch (b->kind) {
        case BLOCK_HEADING:
            if (b->level == 1)
                fprintf(out, "%s\n", b->text);
            else
                fprintf(out, "\n== %s\n", b->text);
            break;
        case BLOCK_PARAGRAPH:
            fprintf(out, "%s\n", b->text);
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
                fprintf(out, "  %s\n", b->lines[l]);
            break;
        case BLOCK_LAYOUT:
            layout_print_text(out, b->layout, d->cacheline);
            break;
        }
    }
}
