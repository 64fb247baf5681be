/* The naming room: the names of DIEs and of the types they refer to, as gdb and the demangler
 * write them. A type's spelling as a C declarator (type_names.c); the qualified names of scopes
 * from an index of each unit's scopes (scope_names.c), a lambda's closure named from its call
 * operator (closures.c), a template's arguments completed from its parameter DIEs
 * (template_args.c); and the indexes clang's and g++'s type units send a name to (function
 * definitions by linkage name, function_defs.c; a type unit's stand-ins and copies in the compile
 * units, stand_ins.c). scope_names.c is the room's top: the spellings below it name the classes
 * they meet through the namer it hands them (probe_name_of). Uses reading/, spelling/ and base/.
 * Files: the .c files of naming/. */
#ifndef PROBE_ROOM_NAMING_H
#define PROBE_ROOM_NAMING_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

#include "../reading/probe_reading.h"

/* ---- type_names.c -------------------------------------------------------------------------------
 * How a DWARF type is spelled in a layout: a C abstract declarator, qualifiers included, with the
 * place a member's name takes in it. */

/* The name of a struct, class, union, enum, typedef or namespace DIE. */
struct scope_name {
    const char *name; /* valid until probe_scope_names_reset; NULL for an unnamed type */
    bool unit_local;  /* in an anonymous namespace or a function of internal linkage: the
                         same name in another unit is another type */
};

/* How a spelling names the classes, enums and typedefs it meets: probe_scope_name_of
 * (scope_names.c), handed in. The two are made of each other (a local class's name holds its
 * function's parameter types, a template instance's its arguments, and a type is spelled with
 * the names of its classes); handing the namer down keeps scope_names.c above this file instead
 * of the two calling each other, as members.c hands its reader to virtual_bases.c. */
typedef bool (*probe_name_of)(Dwarf_Die *die, struct scope_name *out);

/* A malloc'd spelling of the type at die as a C abstract declarator ("unsigned int",
 * "const char *", "struct rx_desc[4]", "void (*)(int, void *)", "const char (*)[32]",
 * "ns::Queue<int, 1>"), or NULL when out of memory. When name_at is not NULL it receives the
 * offset at which a declared name goes: 4 in "char[3]" (char e[3]), 6 in "void (*)(int)". */
char *probe_spell_type(Dwarf_Die *die, size_t *name_at, probe_name_of name_of);

/* probe_spell_type through typedefs ("int" for an int32_t), without the name's place, as a
 * mangled name has the type: for the parameters in a function's or a lambda's demangled name,
 * and a template's type arguments. */
char *probe_spell_type_resolved(Dwarf_Die *die, probe_name_of name_of);

/* ---- closures.c ---------------------------------------------------------------------------------
 * Lambda closure types in DWARF. Neither compiler names them (gcc's are unnamed structs with
 * "<lambda>" constructors, clang's unnamed classes), so they are named as the demangler names them,
 * "{lambda(int)#1}", from their call operator's parameters and their place among the closures of
 * the same scope (scope_names.c numbers them). */

/* Whether die (a struct or class without a name) is a lambda's closure; *call receives its
 * operator() declaration when it has one (*has_call says so). */
bool probe_closure_of(Dwarf_Die *die, Dwarf_Die *call, bool *has_call);

/* A function's (a call operator's) parameter types as the demangler writes them, joined by ", "
 * ("int, char const*"; "" for none), their classes named by name_of (type_names.c), malloc'd;
 * NULL when out of memory. */
char *probe_function_params(Dwarf_Die *call, probe_name_of name_of);

/* Whether a member function (a lambda's call operator: the lambda is not mutable) is const: its
 * this points to const. */
bool probe_method_is_const(Dwarf_Die *call);

/* Whether function (a subprogram definition or declaration, with DW_AT_name "operator()") is a
 * call operator; *declaration receives the declaration inside its class (the function itself
 * when it is one). */
bool probe_closure_call_declaration(Dwarf_Die *function, Dwarf_Die *declaration);

/* ---- template_args.c ----------------------------------------------------------------------------
 * The canonical own name of a C++ class, enum or typedef DIE (cxx_names.c), its template arguments
 * completed from the DIE's template parameters where the producer's name lacks what the demangler
 * writes: g++ leaves an integer argument's type out ("array<int, 3>" for the demangler's
 * "array<int, 3ul>"), clang writes an enumerator's name ("Val<ea>" for "Val<(E)0>"), and each
 * writes a lambda its own way ("<lambda(int)>", "(lambda at f.cc:3:4)"). */

/* raw is the DIE's own name (DW_AT_name); a malloc'd canonical spelling, the classes and
 * enumerations of its arguments named by name_of (type_names.c); NULL when out of memory. */
char *probe_template_args_canonical(Dwarf_Die *die, const char *raw, probe_name_of name_of);

/* ---- function_defs.c ----------------------------------------------------------------------------
 * Function definitions of every compile unit by linkage name, for what a type unit only holds a
 * copy of: gcc's type units copy a lambda's closure under a bare declaration of its function,
 * without the call operator's parameters or its siblings, which naming it takes; and by the
 * declaration they complete, for a closure clang puts under an empty function DIE, which only its
 * call operator's definition names. */

/* The definitions (with their bodies' DIEs: out-of-line, abstract or concrete instances) of the
 * function whose mangled name is linkage, in the file dw: how many (at most max are filled).
 * The index is built on the first call. */
size_t probe_function_definitions(Dwarf *dw, const char *linkage, Dwarf_Die *out, size_t max);

/* The definition (out-of-line or abstract instance) at the top of a compile unit or namespace
 * that completes declaration (by DW_AT_specification), in declaration's file. False when none.
 * The index is built on the first call. */
bool probe_function_definition_of(Dwarf_Die *declaration, Dwarf_Die *out);

/* Frees the indexes: call when the file is closed. */
void probe_function_defs_reset(void);

/* ---- stand_ins.c --------------------------------------------------------------------------------
 * What a type unit only stands for or copies, found in the compile units. The stand-in of a
 * type-unit type: the declaration with DW_AT_signature a compile unit puts where the type belongs;
 * clang's type units put a type local to a function under an empty DW_TAG_subprogram, and a
 * lambda's closure without its call operator: what names them (the function, the operator's
 * parameters) is only at the stand-in. The original of a copy: g++'s type units copy a class local
 * to a function (a closure too) under a bare declaration of the function, without its parameters,
 * its class or its linkage name; the original is the class the compile units have at the same place
 * in the source. */

/* A stand-in of type (a DIE of a type unit) in a compile unit of the same file. The index is
 * built on the first call, by one walk of every compile unit's DIEs. */
bool probe_stand_in_of(Dwarf_Die *type, Dwarf_Die *out);

/* The class local to a function in a compile unit of the same file that copy (a DIE of a type
 * unit) copies: one class with its line, column, name and size; false when none or several. */
bool probe_original_of_copy(Dwarf_Die *copy, Dwarf_Die *out);

/* Frees the index: call when the file is closed. */
void probe_stand_ins_reset(void);

/* ---- scope_names.c ------------------------------------------------------------------------------
 * Qualified names of C++ types as gdb spells them ("lc::Outer::Inner", "(anonymous namespace)::S",
 * "f()::Local"), shared by the layout walk (names of the types it reads) and the type spellings
 * (names of the types members refer to). libdw has no parent links, so each unit's scopes are
 * indexed once, in one walk, and names are cached per DIE. */

/* The name of a struct, class, union, enum, typedef or namespace DIE: qualified with its
 * enclosing namespaces, classes and functions in C++ (the scopes of a definition given by
 * DW_AT_specification are those of its declaration, as GCC's type units have it), plain in C.
 * False only when out of memory. */
bool probe_scope_name_of(Dwarf_Die *die, struct scope_name *out);

/* The struct, class and union DIEs (declarations included) and typedefs of the unit whose root
 * DIE is root, in DWARF order: those at its top, in namespaces, nested in classes, and in C++
 * also those local to functions. The array stays valid until the next call or the reset. False
 * when out of memory. */
bool probe_scope_unit_types(Dwarf_Die *root, const Dwarf_Die **types, size_t *count);

/* probe_spell_type (type_names.c) naming what it meets as probe_scope_name_of does: a member's
 * type as a layout spells it. */
char *probe_type_decl(Dwarf_Die *die, size_t *name_at);

/* Frees every index and name: call when the Dwarf handles they point into are closed. */
void probe_scope_names_reset(void);

#endif
