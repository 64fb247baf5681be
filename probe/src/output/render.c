/* Text (in pahole's columns, with C declarators), Markdown and JSON renderings of a layout. */
#include "probe/layout_render.h"

#include "probe/classes.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "probe_output.h"

/* pahole's columns, with tabs of 8: the type at 8 x tabs, the name at 35, the offset at 57. */
enum { TYPE_WIDTH = 26, NAME_WIDTH = 21 };

const char *layout_classes_text(uint64_t size, char *out, size_t space)
{
    size_t used = 0;
    out[0] = '\0';
    for (int a = 0; a < ALLOC_COUNT; a++) {
        struct size_class c;
        if (!probe_class_of((enum allocator)a, size ? size : 1, &c))
            continue;
        int n = snprintf(out + used, space - used, "%s%s %" PRIu64, used ? ", " : "",
                         probe_class_models[a].name, c.reserved);
        used += n > 0 && (size_t)n < space - used ? (size_t)n : 0;
    }
    return out;
}

json_t *layout_classes_json(uint64_t size)
{
    json_t *classes = json_object();
    for (int a = 0; a < ALLOC_COUNT; a++) {
        struct size_class c;
        json_object_set_new(classes, probe_class_models[a].name,
                            probe_class_of((enum allocator)a, size, &c)
                                ? json_integer((json_int_t)c.reserved)
                                : json_null());
    }
    return classes;
}

/* The name a nested member shows inside its container's braces: "x" for "point.x", "" for an
 * anonymous one. */
static const char *shown_name(const struct layout_member *m, const char *container)
{
    size_t n = strlen(container);
    const char *name = m->name;
    if (n > 0 && strncmp(name, container, n) == 0 && name[n] == '.')
        name += n + 1;
    return strcmp(name, "{anonymous}") == 0 ? "" : name;
}

/* "public virtual " and the like, for a base class. */
static const char *access_word(const struct layout_type *t, const struct layout_member *m)
{
    unsigned access = m->access           ? m->access
                      : t->kind[0] == 'c' ? DW_ACCESS_private
                                          : DW_ACCESS_public;
    return access == DW_ACCESS_protected ? "protected"
           : access == DW_ACCESS_private ? "private"
                                         : "public";
}

/* " : public virtual VBase, private Priv": the class's own base list (not the virtual bases
 * it inherits through them). */
static void print_bases(FILE *out, const struct layout_type *t)
{
    const char *separator = " : ";
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        if (!m->is_base || m->depth > 0 || m->is_indirect)
            continue;
        fprintf(out, "%s%s %s%s", separator, access_word(t, m), m->is_virtual ? "virtual " : "",
                m->type);
        separator = ", ";
    }
}

/* "struct VL : public virtual VBase {" */
static void print_header(FILE *out, const struct layout_type *t)
{
    fprintf(out, "%s %s", t->kind, t->name);
    print_bases(out, t);
    fprintf(out, " {%s\n",
            t->odr_conflict ? " /* ODR: another definition of this name differs */" : "");
}

struct printer {
    FILE *out;
    const struct layout_type *t;
    unsigned cacheline;
    uint64_t line; /* the cache line of the last boundary printed */
    size_t hole;   /* the next hole to print */
};

static void indent(FILE *out, int tabs)
{
    for (int i = 0; i < tabs; i++)
        fputc('\t', out);
}

/* Left of the offset comment: as wide as pahole's type and name columns at this indent. */
static int text_width(int tabs)
{
    int width = TYPE_WIDTH + 1 + NAME_WIDTH - 8 * (tabs - 1);
    return width > NAME_WIDTH ? width : NAME_WIDTH;
}

static void print_offsets(FILE *out, const struct layout_member *m, unsigned cacheline)
{
    if (m->bit_offset >= 0)
        fprintf(out, " /* %5" PRIu64 ":%2" PRIu64 " %2" PRIu64 " */", m->offset,
                (uint64_t)m->bit_offset - m->offset * 8, m->size);
    else
        fprintf(out, " /* %5" PRIu64 " %5" PRIu64 " */", m->offset, m->size);
    bool straddles = cacheline && m->size > 0 && m->bit_offset < 0 &&
                     m->offset / cacheline != (m->offset + m->size - 1) / cacheline;
    fprintf(out, "%s", straddles ? " /* straddles a cacheline */" : "");
    if (m->size_derived)
        fprintf(out, " /* size derived: its type is only declared */");
    else if (m->type_size != m->size && m->bit_offset < 0)
        fprintf(out, " /* sizeof %" PRIu64 " */", m->type_size);
    fputc('\n', out);
}

/* "8", or "8 or more" when a member's type is only declared and the alignment rests on it. */
static void print_align(FILE *out, const struct layout_type *t)
{
    fprintf(out, "%" PRIu64 "%s", t->align, t->align_unknown ? " or more (unknown)" : "");
}

/* One member: "const char" in the type column, "(*strings)[32];" in the name column. */
static void print_member(struct printer *p, const struct layout_member *m, const char *name,
                         int tabs)
{
    struct declaration d;
    if (!probe_declaration_split(m->type, m->name_at, name, &d))
        return;
    char bits[16] = "";
    if (m->bit_offset >= 0)
        snprintf(bits, sizeof bits, ":%u", m->bit_size);
    int type_width = TYPE_WIDTH - 8 * (tabs - 1), n;
    indent(p->out, tabs);
    if (d.declarator[0] == '\0' && bits[0] == '\0') /* "union {...};": its members not read */
        n = fprintf(p->out, "%s;", d.specifiers);
    else
        n = fprintf(p->out, "%-*s %s%s;", type_width > 0 ? type_width : 0, d.specifiers,
                    d.declarator, bits);
    fprintf(p->out, "%*s", n < text_width(tabs) ? text_width(tabs) - n : 0, "");
    print_offsets(p->out, m, p->cacheline);
    probe_declaration_free(&d);
}

/* A base class, as pahole shows it: a comment naming the base, "<ancestor>", then offsets. */
static void print_base(struct printer *p, const struct layout_member *m, int tabs)
{
    int type_width = TYPE_WIDTH - 8 * (tabs - 1);
    indent(p->out, tabs);
    char base[64];
    snprintf(base, sizeof base, "%s%%-%ds <ancestor>; */", m->is_virtual ? "/* virtual " : "/* ",
             type_width > 8 ? type_width - (m->is_virtual ? 8 : 0) : 0);
    int n = fprintf(p->out, base, m->type);
    fprintf(p->out, "%*s", n < text_width(tabs) ? text_width(tabs) - n : 0, "");
    print_offsets(p->out, m, p->cacheline);
}

static void print_hole(FILE *out, uint64_t bits)
{
    if (bits % 8 == 0)
        fprintf(out, "\n\t/* XXX %" PRIu64 " byte%s hole, try to pack */\n\n", bits / 8,
                bits == 8 ? "" : "s");
    else
        fprintf(out, "\n\t/* XXX %" PRIu64 " bit%s hole, try to pack */\n\n", bits,
                bits == 1 ? "" : "s");
}

/* "--- cacheline 1 boundary (64 bytes) ---" before the first member that starts past it. */
static void print_boundary(struct printer *p, const struct layout_member *m, int tabs)
{
    uint64_t line = p->cacheline ? m->offset / p->cacheline : 0;
    if (p->cacheline == 0 || line <= p->line || p->t->kind[0] == 'u')
        return;
    p->line = line;
    indent(p->out, tabs);
    fprintf(p->out, "/* --- cacheline %" PRIu64 " boundary (%" PRIu64 " bytes)", line,
            line * p->cacheline);
    if (m->offset > line * p->cacheline)
        fprintf(p->out, " was %" PRIu64 " bytes ago", m->offset - line * p->cacheline);
    fprintf(p->out, " --- */\n");
}

/* The opening of a member whose members follow it: "union {", "struct inner {"; its closing:
 * "}", "} point", "} sort_list[10]". */
static bool block_text(const struct layout_member *m, const char *name, char **open, char **close)
{
    struct declaration d;
    if (!probe_declaration_split(m->type, m->name_at, name, &d))
        return false;
    size_t n = strlen(d.specifiers);
    bool unnamed = n >= 5 && strcmp(d.specifiers + n - 5, "{...}") == 0;
    *open = malloc(n + 3);
    *close = malloc(strlen(d.declarator) + 3);
    if (*open && *close) {
        snprintf(*open, n + 3, "%.*s%s{", (int)(unnamed ? n - 5 : n), d.specifiers,
                 unnamed ? "" : " ");
        sprintf(*close, "}%s%s", d.declarator[0] ? " " : "", d.declarator);
    }
    probe_declaration_free(&d);
    if (*open && *close)
        return true;
    free(*open);
    free(*close);
    return false;
}

/* "} point;" in the offset column of its member. */
static void print_close(struct printer *p, const struct layout_member *m, const char *close,
                        int tabs)
{
    indent(p->out, tabs);
    int n = fprintf(p->out, "%s;", close);
    fprintf(p->out, "%*s", n < text_width(tabs) ? text_width(tabs) - n : 0, "");
    print_offsets(p->out, m, p->cacheline);
}

/* Prints the members from i at depth, each followed by those nested in it; returns the index
 * past them. Holes follow the type's own members (depth 0). */
static size_t print_members(struct printer *p, size_t i, uint8_t depth, const char *container)
{
    const struct layout_type *t = p->t;
    while (i < t->member_count && t->members[i].depth == depth) {
        const struct layout_member *m = &t->members[i];
        const char *name = shown_name(m, container);
        int tabs = 1 + depth;
        size_t own = i++;
        char *open, *close;
        print_boundary(p, m, tabs);
        bool nested = i < t->member_count && t->members[i].depth > depth;
        if (m->is_base) {
            print_base(p, m, tabs);
            if (nested)
                i = print_members(p, i, (uint8_t)(depth + 1), m->name);
        } else if (nested && block_text(m, name, &open, &close)) {
            indent(p->out, tabs);
            fprintf(p->out, "%s\n", open);
            i = print_members(p, i, (uint8_t)(depth + 1), m->name);
            print_close(p, m, close, tabs);
            free(open);
            free(close);
        } else {
            print_member(p, m, name, tabs);
        }
        while (depth == 0 && p->hole < t->hole_count && t->holes[p->hole].after_member <= own)
            print_hole(p->out, t->holes[p->hole++].bits);
    }
    return i;
}

static void print_summary(FILE *out, const struct layout_type *t, unsigned cacheline)
{
    uint64_t lines = cacheline ? (t->size + cacheline - 1) / cacheline : 0, sum = 0;
    size_t own = 0;
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        own += m->depth == 0;
        sum += m->depth == 0 && m->bit_offset < 0 ? m->size : 0;
    }
    fprintf(out, "\n\t/* size: %" PRIu64 ", align: ", t->size);
    print_align(out, t);
    fprintf(out, "%s, cachelines: %" PRIu64 ", members: %zu */\n", t->packed ? " (packed)" : "",
            lines, own);
    if (t->byte_holes)
        fprintf(out, "\t/* sum members: %" PRIu64 ", holes: %zu, sum holes: %" PRIu64 " */\n", sum,
                t->byte_holes, t->hole_bytes);
    if (t->hole_count > t->byte_holes)
        fprintf(out, "\t/* bit holes: %zu */\n", t->hole_count - t->byte_holes);
    if (t->padding)
        fprintf(out, "\t/* padding: %" PRIu64 "%s */\n", t->padding,
                t->padding_unknown ? " at most (a base is only declared)" : "");
    if (cacheline && t->size % cacheline)
        fprintf(out, "\t/* last cacheline: %" PRIu64 " bytes */\n", t->size % cacheline);
    char classes[256];
    layout_classes_text(t->size, classes, sizeof classes);
    fprintf(out, "\t/* classes:%s%s */\n", classes[0] ? " " : "", classes);
}

void layout_print_text(FILE *out, const struct layout_type *t, unsigned cacheline)
{
    print_header(out, t);
    struct printer p = {out, t, cacheline, 0, 0};
    size_t i = 0;
    while (i < t->member_count) /* depth 0 first; a stray deeper member is printed alone */
        i = print_members(&p, i, t->members[i].depth, "");
    print_summary(out, t, cacheline);
    fprintf(out, "};\n\n");
}

/* Writes s for a Markdown table cell, in backticks (a '|' would end the cell). */
static void markdown_code(FILE *out, const char *prefix, const char *s, const char *suffix)
{
    fputc('`', out);
    fputs(prefix, out);
    for (; *s; s++)
        if (*s == '|')
            fputs("\\|", out);
        else
            fputc(*s == '`' ? '\'' : *s, out);
    fputs(suffix, out);
    fputc('`', out);
}

/* The offset and size cells, and the indent of a nested member's declaration. */
static void markdown_cells(FILE *out, const struct layout_member *m)
{
    if (m->bit_offset >= 0)
        fprintf(out, "| %" PRIu64 " (bit %" PRId64 ") | %u bits | ", m->offset, m->bit_offset,
                m->bit_size);
    else
        fprintf(out, "| %" PRIu64 " | %" PRIu64 "%s | ", m->offset, m->size,
                m->size_derived ? " (derived)" : "");
    for (uint8_t i = 0; i < m->depth; i++)
        fputs("&nbsp;&nbsp;", out);
}

/* One member as a row: "| 8 | 8 | `void (*cb)(int, void *)` |". */
static void markdown_member(FILE *out, const struct layout_member *m, const char *name)
{
    struct declaration d;
    if (!probe_declaration_split(m->type, m->name_at, name, &d))
        return;
    char bits[16] = "";
    if (m->bit_offset >= 0)
        snprintf(bits, sizeof bits, ":%u", m->bit_size);
    markdown_cells(out, m);
    char *text = malloc(strlen(d.specifiers) + strlen(d.declarator) + 2);
    if (text != NULL) {
        sprintf(text, "%s%s%s", d.specifiers, d.specifiers[0] ? " " : "", d.declarator);
        markdown_code(out, "", text, bits);
    }
    fputs(" |\n", out);
    free(text);
    probe_declaration_free(&d);
}

static void markdown_holes(FILE *out, const struct layout_type *t, size_t own, size_t *hole)
{
    while (*hole < t->hole_count && t->holes[*hole].after_member <= own) {
        const struct layout_hole *h = &t->holes[(*hole)++];
        const struct layout_member *after = &t->members[h->after_member];
        if (h->bit_hole)
            fprintf(out, "| | %" PRIu64 " bits | *hole* |\n", h->bits);
        else
            fprintf(out, "| %" PRIu64 " | %" PRIu64 " | *hole* |\n", after->offset + after->size,
                    h->bits / 8);
    }
}

/* The Markdown rows of the members from i at depth (see print_members). */
static size_t markdown_members(FILE *out, const struct layout_type *t, size_t i, uint8_t depth,
                               const char *container, size_t *hole)
{
    while (i < t->member_count && t->members[i].depth == depth) {
        const struct layout_member *m = &t->members[i];
        const char *name = shown_name(m, container);
        size_t own = i++;
        bool nested = i < t->member_count && t->members[i].depth > depth;
        char *open = NULL, *close = NULL;
        if (m->is_base) {
            markdown_cells(out, m);
            markdown_code(out, m->is_virtual ? "/* virtual " : "/* ", m->type, " <ancestor>; */");
            fputs(" |\n", out);
        } else if (nested && block_text(m, name, &open, &close)) {
            markdown_cells(out, m);
            markdown_code(out, "", open, "");
            fputs(" |\n", out);
        } else {
            markdown_member(out, m, name);
        }
        if (nested)
            i = markdown_members(out, t, i, (uint8_t)(depth + 1), m->name, hole);
        if (close != NULL) {
            fputs("| | | ", out);
            for (uint8_t d = 0; d < depth; d++)
                fputs("&nbsp;&nbsp;", out);
            markdown_code(out, "", close, ";");
            fputs(" |\n", out);
        }
        free(open);
        free(close);
        if (depth == 0)
            markdown_holes(out, t, own, hole);
    }
    return i;
}

void layout_print_markdown(FILE *out, const struct layout_type *t)
{
    fprintf(out, "### %s %s", t->kind, t->name);
    print_bases(out, t);
    fprintf(out, ": %" PRIu64 " B, align ", t->size);
    print_align(out, t);
    fprintf(out, "%s\n\n", t->odr_conflict ? " (ODR: differing definitions)" : "");
    fprintf(out, "| offset | size | declaration |\n|---|---|---|\n");
    size_t hole = 0, i = 0;
    while (i < t->member_count)
        i = markdown_members(out, t, i, t->members[i].depth, "", &hole);
    char classes[256];
    if (layout_classes_text(t->size, classes, sizeof classes)[0] == '\0')
        snprintf(classes, sizeof classes, "none (past 1 GiB)"); /* no model goes that far */
    fprintf(out, "\nholes: %zu (%" PRIu64 " B), padding: %s%" PRIu64 " B; classes: %s\n\n",
            t->byte_holes, t->hole_bytes, t->padding_unknown ? "at most " : "", t->padding,
            classes);
}

json_t *layout_type_json(const struct layout_type *t)
{
    json_t *members = json_array();
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        if (m->inline_only)
            continue; /* read for the text's inline members only: JSON lists them with --expand */
        json_t *row = json_pack("{s:s, s:s, s:I, s:I}", "name", m->name, "type", m->type, "offset",
                                (json_int_t)m->offset, "size", (json_int_t)m->size);
        json_object_set_new(row, "bit_offset",
                            m->bit_offset >= 0 ? json_integer(m->bit_offset) : json_null());
        json_object_set_new(row, "bit_size", m->bit_size ? json_integer(m->bit_size) : json_null());
        if (m->type_size != m->size && !m->size_derived)
            json_object_set_new(row, "type_size", json_integer((json_int_t)m->type_size));
        if (m->size_derived)
            json_object_set_new(row, "size_derived", json_true());
        if (m->artificial)
            json_object_set_new(row, "artificial", json_true());
        if (m->defined_in != NULL)
            json_object_set_new(row, "defined_in", json_string(m->defined_in));
        if (m->is_base)
            json_object_set_new(row, "base", json_true());
        if (m->is_virtual)
            json_object_set_new(row, "virtual", json_true());
        if (m->is_indirect)
            json_object_set_new(row, "indirect", json_true());
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
    json_t *type = json_pack(
        "{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:b, s:b, s:o, s:o}", "name", t->name,
        "kind", t->kind, "size", (json_int_t)t->size, "align", (json_int_t)t->align, "holes",
        (json_int_t)t->byte_holes, "bit_holes", (json_int_t)(t->hole_count - t->byte_holes),
        "hole_bytes", (json_int_t)t->hole_bytes, "hole_list", holes, "padding",
        (json_int_t)t->padding, "packed", t->packed, "odr_conflict", t->odr_conflict, "members",
        members, "classes", layout_classes_json(t->size ? t->size : 1));
    if (t->align_unknown) /* (after the stable keys, keeping their order) */
        json_object_set_new(type, "align_unknown", json_true());
    if (t->padding_unknown)
        json_object_set_new(type, "padding_unknown", json_true());
    return type;
}
