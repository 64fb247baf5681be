/* XML's escaping of text and attribute values, for everything the tools write as XML, SVG or
 * HTML (JUnit files, report pages). */
#ifndef COMMON_XML_ESCAPE_H
#define COMMON_XML_ESCAPE_H

#include <stdio.h>

/* Writes s with &, <, > and " as entities: safe in text and in a double-quoted attribute. */
void xml_escape(FILE *out, const char *s);

#endif
