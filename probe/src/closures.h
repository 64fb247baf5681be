/* Lambda closure types in DWARF. Neither compiler names them (gcc's are unnamed structs with
 * "<lambda>" constructors, clang's unnamed classes), so they are named as the demangler names
 * them, "{lambda(int)#1}", from their call operator's parameters and their place among the
 * closures of the same scope (scope_names.c numbers them). */
#ifndef PROBE_CLOSURES_H
#define PROBE_CLOSURES_H

#include <elfutils/libdw.h>
#include <stdbool.h>

#include "type_names.h" /* probe_name_of */

/* Whether die (a struct or class without a name) is a lambda's closure; *call receives its
 * operator() declaration when it has one (*has_call says so). */
bool probe_closure_of(Dwarf_Die *die, Dwarf_Die *call, bool *has_call);

/* A function's (a call operator's) parameter types as the demangler writes them, joined by ", "
 * ("int, char const*"; "" for none), their classes named by name_of (type_names.h), malloc'd;
 * NULL when out of memory. */
char *probe_function_params(Dwarf_Die *call, probe_name_of name_of);

/* Whether a member function (a lambda's call operator: the lambda is not mutable) is const: its
 * this points to const. */
bool probe_method_is_const(Dwarf_Die *call);

/* Whether function (a subprogram definition or declaration, with DW_AT_name "operator()") is a
 * call operator; *declaration receives the declaration inside its class (the function itself
 * when it is one). */
bool probe_closure_call_declaration(Dwarf_Die *function, Dwarf_Die *declaration);

#endif
