/* The pull-request rendering: GitHub-flavoured Markdown tables, stacks in code blocks. */
#include <string.h>

#include "reports_render.h"
#include "probe/layout_render.h"

/* A cell with '|' escaped so it stays one cell. */
static void print_cell(FILE *out, const char *cell)
{
    fputc(' ', out);
    for (const char *p = cell; *p; p++) {
        if (*p == '|')
            fputc('\\', out);
        fputc(*p, out);
    }
    fputs(" |", out);
}

static void print_table(FILE *out, const struct table *t)
{
    for (size_t r = 0; r < t->rows; r++) {
        fputc('|', out);
        for (size_t c = 0; c < t->columns; c++)
            print_cell(out, t->cells[r * t->columns + c]);
        fputc('\n', out);
        if (r == 0) {
            fputc('|', out);
            for (size_t c = 0; c < t->columns; c++)
                fputs(" --- |", out);
            fputc('\n', out);
        }
    }
    fputc('\n', out);
}

static void print_chart(FILE *out, const char *title, const struct chart *c)
{
    fprintf(out, "%s:\n\n| | %s |\n| --- | --- |\n", title, c->unit);
    for (size_t i = 0; i < c->count; i++)
        fprintf(out, "| %s | %g |\n", c->labels[i], c->values[i]);
    fputc('\n', out);
}

void report_render_markdown(FILE *out, const struct document *d)
{
    for (size_t i = 0; i < d->count; i++) {
        const struct block *b = &d->blocks[i];
        switch (b->kind) {
        case BLOCK_HEADING:
            fprintf(out, "%s %s\n\n", b->level == 1 ? "#" : "##", b->text);
            break;
        case BLOCK_PARAGRAPH:
            fprintf(out, "%s\n\n", b->text);
            break;
        case BLOCK_TABLE:
            print_table(out, &b->table);
            break;
        case BLOCK_CHART:
            if (!b->illustrates && b->chart.count > 0)
                print_chart(out, b->text, &b->chart);
            break;
        case BLOCK_LINES:
            fputs("```\n", out);
            for (size_t l = 0; l < b->line_count; l++)
                fprintf(out, "%s\n", b->lines[l]);
            fputs("```\n\n", out);
            break;
        case BLOCK_LIST:
            fprintf(out, "**%s:**\n\n", b->text);
            for (size_t l = 0; l < b->line_count; l++)
                fprintf(out, "- %s\n", b->lines[l]);
            fputc('\n', out);
            break;
        case BLOCK_LAYOUT:
            layout_print_markdown(out, b->layout);
            fputc('\n', out);
            break;
        }
    }
}
