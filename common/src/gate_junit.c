/* JUnit XML of qaudit gate's rules, for both halves (gate_junit.h). */
#include "common/gate_junit.h"

#include "common/xml_escape.h"

FILE *gate_junit_open(const char *path, size_t tests, size_t failures, size_t skipped,
                      bool count_skipped)
{
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return NULL;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(out, "<testsuite name=\"qaudit gate\" tests=\"%zu\" failures=\"%zu\"", tests, failures);
    if (count_skipped)
        fprintf(out, " skipped=\"%zu\"", skipped);
    fprintf(out, ">\n");
    return out;
}

void gate_junit_case(FILE *out, const struct junit_case *c, const char *accept)
{
    fprintf(out, "  <testcase classname=\"");
    xml_escape(out, c->classname);
    fprintf(out, "\" name=\"");
    xml_escape(out, c->name);
    if (c->file != NULL) {
        fprintf(out, "\" file=\"");
        xml_escape(out, c->file);
        fprintf(out, "\" line=\"%u", c->line);
    }
    if (c->verdict == JUNIT_PASSED) {
        fprintf(out, "\"/>\n");
        return;
    }
    if (c->verdict == JUNIT_SKIPPED) {
        fprintf(out, "\">\n    <skipped message=\"");
        xml_escape(out, c->message);
        fprintf(out, "\"/>\n  </testcase>\n");
        return;
    }
    fprintf(out, "\">\n    <failure type=\"");
    xml_escape(out, c->name);
    fprintf(out, "\" message=\"");
    xml_escape(out, c->message);
    fprintf(out, "\">");
    if (accept != NULL) {
        fprintf(out, "to accept this change: ");
        xml_escape(out, accept);
    }
    fprintf(out, "</failure>\n  </testcase>\n");
}

bool gate_junit_close(FILE *out)
{
    fprintf(out, "</testsuite>\n");
    bool written = !ferror(out);
    return fclose(out) == 0 && written;
}
