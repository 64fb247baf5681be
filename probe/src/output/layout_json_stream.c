/* qaudit-layout/1 written a type at a time: the document's head, then each type as jansson
 * dumps it (indented one level deeper, as in the whole document), then its end. A full dump of
 * thousands of types held as one jansson tree cost a third of the JSON run in allocations and
 * page faults. */
#include <stdlib.h>
#include <string.h>

#include "probe/layout_render.h"

static int indented(const char *buffer, size_t size, void *data)
{
    FILE *out = data;
    for (const char *p = buffer, *end = buffer + size; p < end;) {
        const char *newline = memchr(p, '\n', (size_t)(end - p));
        size_t n = newline ? (size_t)(newline - p) + 1 : (size_t)(end - p);
        fwrite(p, 1, n, out);
        if (newline)
            fputs("  ", out); /* the types array's depth under JSON_INDENT(1) */
        p += n;
    }
    return 0;
}

void layout_json_begin(struct layout_json_writer *w, FILE *out, const char *binary,
                       unsigned cacheline)
{
    w->out = out;
    w->types = 0;
    json_t *name = json_string(binary);
    char *quoted = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
    fprintf(out,
            "{\n \"format\": \"qaudit-layout/1\",\n \"binary\": %s,\n \"cacheline\": %u,\n"
            " \"types\": [",
            quoted ? quoted : "null", cacheline);
    free(quoted);
    json_decref(name);
}

bool layout_json_type(struct layout_json_writer *w, const struct layout_type *t)
{
    json_t *type = layout_type_json(t);
    if (type == NULL)
        return false;
    fputs(w->types++ ? ",\n  " : "\n  ", w->out);
    json_dump_callback(type, indented, w->out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(type);
    return true;
}

void layout_json_end(struct layout_json_writer *w)
{
    fputs(w->types ? "\n ]\n}\n" : "]\n}\n", w->out);
}
