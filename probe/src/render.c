/* Text and JSON renderings of a layout. */
#include "probe/render.h"

#include "probe/classes.h"

#include <inttypes.h>
#include <string.h>

static json_t *classes_json(uint64_t size)
{
    json_t *classes = json_object();
    for (int a = 0; a < ALLOC_COUNT; a++) {
        struct size_class c;
        json_object_set_new(classes, class_models[a].name,
                            class_of((enum allocator)a, size, &c)
                                ? json_integer((json_int_t)c.reserved)
                                : json_null());
    }
    return classes;
}

static void print_hole(FILE *out, uint64_t bits)
{
    if (bits % 8 == 0)
        fprintf(out, "\n\t/* XXX %" PRIu64 " byte%s hole */\n\n", bits / 8, bits == 8 ? "" : "s");
    else
        fprintf(out, "\n\t/* XXX %" PRIu64 " bit%s hole */\n\n", bits, bits == 1 ? "" : "s");
}

void xml_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

void layout_print_text(FILE *out, const struct layout_type *t, unsigned cacheline)
{
    fprintf(out, "%s %s {", t->kind, t->name);
    if (t->odr_conflict)
        fprintf(out, " /* ODR: another definition of this name differs */");
    fprintf(out, "\n");
    size_t hole = 0;
    uint64_t line = 0;
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        uint64_t this_line = cacheline ? m->offset / cacheline : 0;
        if (cacheline && this_line > line && t->kind[0] != 'u') {
            line = this_line;
            fprintf(out, "\t/* --- cacheline %" PRIu64 " boundary (%" PRIu64 " bytes) --- */\n",
                    line, line * cacheline);
        }
        char decl[600];
        int indent = 2 * m->depth;
        if (m->is_base)
            snprintf(decl, sizeof decl, "/* base */ %s", m->type);
        else
            snprintf(decl, sizeof decl, "%s %s", m->type, m->name[0] ? m->name : "/* anonymous */");
        fprintf(out, "\t%*s%-*s", indent, "", 44 - indent, decl);
        if (m->bit_offset >= 0)
            fprintf(out, ":%-3u /* %5" PRIu64 ":%2" PRIu64 " %4" PRIu64 " */", m->bit_size,
                    m->offset, (uint64_t)m->bit_offset - m->offset * 8, m->size);
        else
            fprintf(out, "     /* %5" PRIu64 "    %4" PRIu64 " */", m->offset, m->size);
        bool straddles = cacheline && m->size > 0 && m->bit_offset < 0 &&
                         m->offset / cacheline != (m->offset + m->size - 1) / cacheline;
        fprintf(out, "%s\n", straddles ? " /* straddles a cacheline */" : "");
        /* A hole follows the member and everything nested in it. */
        bool last_of_block = i + 1 == t->member_count || t->members[i + 1].depth == 0;
        while (last_of_block && hole < t->hole_count && t->holes[hole].after_member <= i)
            print_hole(out, t->holes[hole++].bits);
    }
    uint64_t lines = cacheline ? (t->size + cacheline - 1) / cacheline : 0;
    size_t own = 0;
    for (size_t i = 0; i < t->member_count; i++)
        own += t->members[i].depth == 0;
    fprintf(out,
            "\n\t/* size: %" PRIu64 ", align: %" PRIu64 "%s, cachelines: %" PRIu64
            ", members: %zu */\n",
            t->size, t->align, t->packed ? " (packed)" : "", lines, own);
    if (t->byte_holes)
        fprintf(out, "\t/* holes: %zu, sum holes: %" PRIu64 " */\n", t->byte_holes, t->hole_bytes);
    if (t->hole_count > t->byte_holes)
        fprintf(out, "\t/* bit holes: %zu */\n", t->hole_count - t->byte_holes);
    if (t->padding)
        fprintf(out, "\t/* padding: %" PRIu64 " */\n", t->padding);
    fprintf(out, "\t/* classes:");
    for (int a = 0; a < ALLOC_COUNT; a++) {
        struct size_class c;
        if (class_of((enum allocator)a, t->size ? t->size : 1, &c))
            fprintf(out, " %s %" PRIu64 "%s", class_models[a].name, c.reserved,
                    a + 1 < ALLOC_COUNT ? "," : "");
    }
    fprintf(out, " */\n};\n\n");
}

void layout_print_markdown(FILE *out, const struct layout_type *t)
{
    fprintf(out, "### %s %s: %" PRIu64 " B, align %" PRIu64 "%s\n\n", t->kind, t->name, t->size,
            t->align, t->odr_conflict ? " (ODR: differing definitions)" : "");
    fprintf(out, "| offset | size | member | type |\n|---|---|---|---|\n");
    size_t hole = 0;
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        if (m->bit_offset >= 0)
            fprintf(out, "| %" PRIu64 " (bit %" PRId64 ") | %u bits | %s | %s |\n", m->offset,
                    m->bit_offset, m->bit_size, m->name, m->type);
        else
            fprintf(out, "| %" PRIu64 " | %" PRIu64 " | %s | %s |\n", m->offset, m->size,
                    m->is_base ? "(base)" : m->name, m->type);
        bool last_of_block = i + 1 == t->member_count || t->members[i + 1].depth == 0;
        while (last_of_block && hole < t->hole_count && t->holes[hole].after_member <= i) {
            const struct layout_hole *h = &t->holes[hole++];
            if (h->bit_hole)
                fprintf(out, "| | %" PRIu64 " bits | *hole* | |\n", h->bits);
            else
                fprintf(out, "| %" PRIu64 " | %" PRIu64 " | *hole* | |\n",
                        t->members[h->after_member].offset + t->members[h->after_member].size,
                        h->bits / 8);
        }
    }
    fprintf(out, "\nholes: %zu (%" PRIu64 " B), padding: %" PRIu64 " B; classes:", t->byte_holes,
            t->hole_bytes, t->padding);
    for (int a = 0; a < ALLOC_COUNT; a++) {
        struct size_class c;
        class_of((enum allocator)a, t->size ? t->size : 1, &c);
        fprintf(out, " %s %" PRIu64 "%s", class_models[a].name, c.reserved,
                a + 1 < ALLOC_COUNT ? "," : "\n\n");
    }
}

json_t *layout_type_json(const struct layout_type *t)
{
    json_t *members = json_array();
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        json_t *row = json_pack("{s:s, s:s, s:I, s:I}", "name", m->name, "type", m->type, "offset",
                                (json_int_t)m->offset, "size", (json_int_t)m->size);
        json_object_set_new(row, "bit_offset",
                            m->bit_offset >= 0 ? json_integer(m->bit_offset) : json_null());
        json_object_set_new(row, "bit_size", m->bit_size ? json_integer(m->bit_size) : json_null());
        if (m->is_base)
            json_object_set_new(row, "base", json_true());
        if (m->depth > 0)
            json_object_set_new(row, "depth", json_integer(m->depth));
        json_array_append_new(members, row);
    }
    json_t *holes = json_array();
    for (size_t i = 0; i < t->hole_count; i++)
        json_array_append_new(holes, json_pack("{s:s, s:I, s:b}", "after",
                                               t->members[t->holes[i].after_member].name, "bits",
                                               (json_int_t)t->holes[i].bits, "bit_hole",
                                               t->holes[i].bit_hole));
    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:b, s:b, s:o, s:o}", "name",
                     t->name, "kind", t->kind, "size", (json_int_t)t->size, "align",
                     (json_int_t)t->align, "holes", (json_int_t)t->byte_holes, "bit_holes",
                     (json_int_t)(t->hole_count - t->byte_holes), "hole_bytes",
                     (json_int_t)t->hole_bytes, "hole_list", holes, "padding",
                     (json_int_t)t->padding, "packed", t->packed, "odr_conflict", t->odr_conflict,
                     "members", members, "classes", classes_json(t->size ? t->size : 1));
}
