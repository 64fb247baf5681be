/* GitHub Actions annotations of qaudit gate's rules, for both halves (gate_annotations.h). */
#include "common/gate_annotations.h"

#include <string.h>

void github_escape(FILE *out, const char *s, bool property)
{
    for (; *s; s++) {
        if (*s == '%')
            fputs("%25", out);
        else if (*s == '\r')
            fputs("%0D", out);
        else if (*s == '\n')
            fputs("%0A", out);
        else if (property && *s == ':')
            fputs("%3A", out);
        else if (property && *s == ',')
            fputs("%2C", out);
        else
            fputc(*s, out);
    }
}

const char *github_workspace_path(const char *path, const char *cwd)
{
    size_t n = strlen(cwd);
    if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

void gate_annotation(FILE *out, const char *kind, const char *file, unsigned line, const char *rule,
                     const char *message, const char *cwd)
{
    fprintf(out, "::%s ", kind);
    if (file != NULL) {
        fputs("file=", out);
        github_escape(out, github_workspace_path(file, cwd), true);
        if (line > 0)
            fprintf(out, ",line=%u", line);
        fputc(',', out);
    }
    fputs("title=", out);
    github_escape(out, "qaudit gate (", true);
    github_escape(out, rule, true);
    fputs(")::", out);
    github_escape(out, message, false);
    fputc('\n', out);
}

void gate_annotation_accept(FILE *out, const char *accept)
{
    fputs("::notice title=qaudit gate::to accept this change: ", out);
    github_escape(out, accept, false);
    fputc('\n', out);
}
