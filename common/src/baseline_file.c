/* The gate's baseline file written for people to read and review (baseline_file.h). */
#include "common/baseline_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* True for an object holding objects or arrays: printed over several lines. */
static bool is_deep(json_t *value)
{
    const char *key;
    json_t *inner;
    bool deep = false;
    json_object_foreach(value, key, inner) deep |= json_is_object(inner) || json_is_array(inner);
    return deep;
}

void baseline_write_value(FILE *out, json_t *value, int indent)
{
    if (!json_is_object(value) || !is_deep(value)) {
        char *text =
            json_dumps(value, JSON_ENCODE_ANY | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        fputs(text ? text : "null", out);
        free(text);
        return;
    }
    const char *key;
    json_t *inner;
    size_t left = json_object_size(value);
    fputs("{\n", out);
    json_object_foreach(value, key, inner)
    {
        json_t *name = json_string(key);
        char *quoted = json_dumps(name, JSON_ENCODE_ANY);
        fprintf(out, "%*s%s: ", indent + 2, "", quoted ? quoted : "\"\"");
        free(quoted);
        json_decref(name);
        baseline_write_value(out, inner, indent + 2);
        fputs(--left ? ",\n" : "\n", out);
    }
    fprintf(out, "%*s}", indent, "");
}

bool baseline_file_save(json_t *doc, const char *path, char *error, size_t size)
{
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    FILE *out = fopen(temporary, "w");
    if (out == NULL) {
        snprintf(error, size, "cannot write %s: %s", temporary, strerror(errno));
        return false;
    }
    baseline_write_value(out, doc, 0);
    fputc('\n', out);
    if (fclose(out) != 0 || rename(temporary, path) != 0) {
        snprintf(error, size, "cannot write %s: %s", path, strerror(errno));
        remove(temporary);
        return false;
    }
    return true;
}
