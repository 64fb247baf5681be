/* A unit's source language as DW_AT_language gives it: which codes are C++, and Rust. One list,
 * so that naming, class look-ups and the unit checks agree on it. */
#ifndef PROBE_LANGUAGE_H
#define PROBE_LANGUAGE_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>

/* 0x2a and 0x2b are DWARF 6's C++17 and C++20 (gcc 12 and clang 14 write C_plus_plus_14). */
static inline bool probe_language_is_cxx(Dwarf_Word code)
{
    return code == DW_LANG_C_plus_plus || code == DW_LANG_C_plus_plus_03 ||
           code == DW_LANG_C_plus_plus_11 || code == DW_LANG_C_plus_plus_14 || code == 0x002a ||
           code == 0x002b;
}

/* The unit root's DW_AT_language (0 without one). */
static inline Dwarf_Word probe_unit_language(Dwarf_Die *root)
{
    Dwarf_Attribute attr;
    Dwarf_Word code = 0;
    if (dwarf_attr(root, DW_AT_language, &attr) == NULL || dwarf_formudata(&attr, &code) != 0)
        return 0;
    return code;
}

/* The unit root's language is C++ (false without DW_AT_language). */
static inline bool probe_unit_is_cxx(Dwarf_Die *root)
{
    return probe_language_is_cxx(probe_unit_language(root));
}

/* The unit root's language is Rust, whose types live in modules (DW_TAG_namespace) as C++'s do
 * in namespaces: core::option::Option<u8> and m::Msg. */
static inline bool probe_unit_is_rust(Dwarf_Die *root)
{
    return probe_unit_language(root) == DW_LANG_Rust;
}

#endif
