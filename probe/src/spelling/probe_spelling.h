/* The spelling room: C++ names as text, one spelling for each (gdb's), parsed (cxx_parse.c,
 * with its own header cxx_parse.h: only cxx_names.c uses it) and printed by libiberty's
 * demangler printer. Reads no DWARF; uses nothing of the probe's. Files: the .c files of
 * spelling/. */
#ifndef PROBE_ROOM_SPELLING_H
#define PROBE_ROOM_SPELLING_H

#include <stdbool.h>
#include <stddef.h>

/* ---- cxx_names.c --------------------------------------------------------------------------------
 * One spelling for every C++ type name, gdb's: a name is parsed into the demangler's component tree
 * and printed by libiberty's printer, as gdb's cp_canonicalize_string does, so that the spellings
 * of g++ ("long unsigned int", "char const*", "500"), clang++ ("unsigned long", "const char *",
 * "500UL") and the user ("std::map<const char*,int>") become one: "unsigned long", "char const*",
 * "500ul", "std::map<char const*, int>". */

/* The canonical spelling of a C++ type name or type-id ("ns::Box<long unsigned int>",
 * "const char *", "int (*)(int)"), malloc'd; a copy of name when it does not parse as one (an
 * expression gdb could not read either). NULL only when out of memory. */
char *probe_cxx_canonical(const char *name);

/* Frees the spellings kept (a name parsed once is looked up after). */
void probe_cxx_names_reset(void);

/* True when name is already canonical without parsing: a plain (qualified) identifier. */
bool probe_cxx_plain_name(const char *name);

/* The fundamental type a DWARF base type name spells, as gdb writes it ("long unsigned int" ->
 * "unsigned long", "__int128 unsigned" -> "unsigned __int128"), or name itself. */
const char *probe_cxx_fundamental(const char *name);

/* Where the arguments of a template-id's own (last) argument list are: "Box<int, Q<2> >" has
 * two, "int" and "Q<2>" (g++'s empty pack, "F<, int>", none). Returns how many there are (at most
 * max spans are filled), 0 for a name without arguments or with unbalanced brackets; *open is where
 * that list's '<' is. */
struct cxx_span {
    size_t at, len;
};
size_t probe_cxx_template_args(const char *name, struct cxx_span *args, size_t max, size_t *open);

/* What follows the first "::" outside template arguments, parameter lists and lambdas' braces
 * ("Outer::Inner" of "lc::Outer::Inner"), or NULL when there is none. */
const char *probe_cxx_next_component(const char *name);

/* "Inner" of "lc::Outer::Inner", "L" of "f(int)::L": the last component. */
const char *probe_cxx_last_component(const char *name);

/* True when two canonical names name the same type: equal, or equal but for an integer literal
 * written with a suffix in one and without in the other ("Val<500>" as gdb prints g++'s names,
 * "Val<500ul>"). */
bool probe_cxx_names_equivalent(const char *a, const char *b);

#endif
