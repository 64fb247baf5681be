/* The reading room: DWARF and ELF as the files hold them, nothing of what they mean for a
 * layout. The input files checked and opened (a separate debug file found by libdwfl; a file's
 * own DWARF without the sections layouts never read), the DIEs read from their bytes where libdw
 * is slow, libdw's calls checked (the first corruption kept) and the checks libdw leaves undone
 * (the abbreviation tables, where units end, layouts no compiler makes), the attributes layouts
 * are read from, the name indexes (.gdb_index, .debug_names) and the DIEs kept by key, the
 * libraries a binary needs. Uses base/ and spelling/ (a name's last component, as the name
 * indexes key nested names). Files: the .c files of reading/, and inline here the numbers,
 * languages and tags DWARF encodes. */
#ifndef PROBE_ROOM_READING_H
#define PROBE_ROOM_READING_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/probe_base.h"
#include "../spelling/probe_spelling.h"
#include "probe/elf_sections.h" /* probe_elf_open, probe_find_section: public (qaudit run and
                                   the reports use them) */
#include "probe/layout.h"

/* ---- read_generation.c --------------------------------------------------------------------------
 * Which read this is: what the unit checks and the scans cache about one read's file keys on it,
 * since a new Dwarf (and its units) may be allocated where the last read's were. A read starts at
 * probe_dwarf_errors_reset (dwarf_errors.c). Per thread. */

/* A number that changes at each new read. */
unsigned probe_read_generation(void);

/* The next read starts. */
void probe_read_generation_next(void);

/* ---- DWARF numbers, inline ----------------------------------------------------------------------
 * Numbers as DWARF encodes them (DWARF 5, section 7.6): LEB128 and little-endian fixed sizes, read
 * within the bytes they may occupy. For the readers that take DIEs and abbreviations from their
 * bytes (abbrev_check.c, die_scan.c, die_end.c). */

/* A LEB128 number at *p within [*p, end), *p moved past it; false past end or beyond 64 bits
 * (more than ten bytes). */
static inline bool probe_leb128(const unsigned char **p, const unsigned char *end, bool is_signed,
                                unsigned long long *out)
{
    unsigned long long value = 0;
    unsigned shift = 0;
    for (; *p < end; shift += 7) {
        unsigned char byte = *(*p)++;
        if (shift < 64)
            value |= (unsigned long long)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            if (is_signed && shift + 7 < 64 && (byte & 0x40))
                value |= ~0ull << (shift + 7);
            *out = value;
            return shift < 70;
        }
    }
    return false;
}

/* The n-byte little-endian number at p (n at most 8). */
static inline unsigned long long probe_little_endian(const unsigned char *p, size_t n)
{
    unsigned long long value = 0;
    for (size_t i = n; i-- > 0;)
        value = value << 8 | p[i];
    return value;
}

/* ---- languages, inline --------------------------------------------------------------------------
 * A unit's source language as DW_AT_language gives it: which codes are C++, and Rust. One list, so
 * that naming, class look-ups and the unit checks agree on it. */

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

/* ---- aggregate tags, inline ---------------------------------------------------------------------
 * The DWARF tags of the types laid out and named as aggregates: structs, classes and unions. */

/* (uint64_t: .debug_names entries carry tags as ULEB128 values; dwarf_tag's -1 matches none) */
static inline bool is_aggregate_tag(uint64_t tag)
{
    return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

static inline bool probe_is_aggregate_type(Dwarf_Die *die)
{
    return is_aggregate_tag(dwarf_tag(die));
}

/* ---- elf_sections.c -----------------------------------------------------------------------------
 * Finding an ELF file's sections by name: the section index readers (.gdb_index, .debug_names), the
 * unit checks (.debug_abbrev) and the input checks all look sections up this way. */

/* The name of section scn, its header in *header; names is the index of the section-name string
 * table (elf_getshdrstrndx). NULL when the header or the name is unreadable. */
char *probe_section_name(Elf *elf, size_t names, Elf_Scn *scn, GElf_Shdr *header);

/* ---- input.c ------------------------------------------------------------------------------------
 * Opening what the probe reads: a readable regular file (a FIFO or a device would block or never
 * end) and a whole ELF file, reported to an offline libdwfl session that finds separate debug
 * files. */

/* False, with "path: why" in error, unless path is a readable regular file and, when it is an
 * ELF file, a whole one: its headers and every section's bytes inside the file (a cut download
 * or copy), its headers readable. */
bool probe_check_file(const char *path, char *error, size_t error_size);

/* path as the one module of a new offline Dwfl (*dwfl, to dwfl_end), or NULL with one line in
 * error when libdwfl cannot read it. */
Dwfl_Module *probe_report_offline(const char *path, Dwfl **dwfl, char *error, size_t error_size);

/* ---- lean_dwarf.c -------------------------------------------------------------------------------
 * Opening a file's own DWARF without the sections layouts never read. libdw decompresses every
 * debug section it knows when it opens a file; on a -gz debug file that is most of the time of a
 * full layout dump, spent on line tables and location lists. */

struct lean_dwarf {
    Dwarf *dwarf;
    Elf *elf;
    void *map;
    size_t size;
};

/* Opens path's own DWARF over a private copy-on-write mapping in which the unread sections are
 * renamed. False (nothing to close) when path is not an ELF file with .debug_info of its own, or
 * is an object file (.o) whose DWARF needs relocating: the caller then goes through libdwfl,
 * which also finds separate debug files and relocates. */
bool probe_lean_dwarf_open(const char *path, struct lean_dwarf *out);
void probe_lean_dwarf_close(struct lean_dwarf *d);

/* ---- die_end.c ----------------------------------------------------------------------------------
 * Where a DIE's attributes end in its section: libdw steps over them inside dwarf_child and
 * dwarf_siblingof but does not say where, and a check of an empty list of children needs it; and
 * where a DIE's unit ends, which libdw keeps to itself. */

/* The address just past die's last attribute (where its children, or its next sibling, start),
 * or NULL when it cannot be told (a form of unknown size, DW_FORM_indirect, damage). */
const unsigned char *probe_die_attributes_end(Dwarf_Die *die);

/* The size of every value of form (the forms of DWARF 5, section 7.5.6, and GNU's), or
 * FORM_VARIABLE when each value tells its own (a string, a block, a LEB128 number), or
 * FORM_UNKNOWN (DW_FORM_indirect, a form no table holds). */
#define FORM_VARIABLE (-1)
#define FORM_UNKNOWN (-2)
int probe_form_fixed_size(unsigned form, uint8_t address_size, uint8_t offset_size);

/* The size of a value of form at p (the forms of DWARF 5, section 7.5.6, and GNU's), within
 * end; false for DW_FORM_indirect, a form no table holds, or a value that does not end before
 * end. (An implicit constant's is 0: it is in the abbreviation.) */
bool probe_form_size(unsigned form, const unsigned char *p, const unsigned char *end,
                     uint8_t address_size, uint8_t offset_size, size_t *size);

/* The offsets, in its section, of die's unit's abbreviation table and of the end of the unit (the
 * next unit's header); false when the unit's header cannot be read. */
bool probe_unit_bounds(Dwarf_Die *die, Dwarf_Off *abbrev, Dwarf_Off *end);

/* The address just past die's unit, in the same mapping as die->addr; NULL when the unit's
 * header cannot be read. */
const unsigned char *probe_unit_end(Dwarf_Die *die);

/* ---- die_scan.c ---------------------------------------------------------------------------------
 * Scans of a unit's DIEs from their bytes: libdw looks each DIE's abbreviation up in a hash table
 * under a lock, and dwarf_siblingof reads every DIE below one that has no DW_AT_sibling (clang
 * writes none) to step over it; a scan looks each abbreviation up once per unit and jumps by
 * DW_AT_sibling where there is one. For the index built ahead of the layout walk (type_defs.c), and
 * for the walk's steps over children it does not read (dwarf_errors.c). A scan checks nothing:
 * where it cannot read, libdw reads, and the checked calls say what is wrong. */

struct die_scanned {
    Dwarf_Die die; /* its addr, cu and abbrev (as libdw would fill them) */
    int tag;
    bool declaration; /* it has DW_AT_declaration */
    bool named;       /* it has DW_AT_name */
};

enum die_scan_result {
    DIE_SCAN_DONE,
    DIE_SCAN_STOPPED,    /* visit said to stop */
    DIE_SCAN_UNREADABLE, /* a form of no known size (DW_FORM_indirect), an unknown
                            abbreviation, a value past the unit's end: read it with libdw */
};

/* What a visit answers: */
enum die_scan_step {
    DIE_SCAN_OVER, /* go on past its children */
    DIE_SCAN_INTO, /* visit its children next */
    DIE_SCAN_STOP, /* end the scan */
};

/* Calls visit for the children of root (a unit's top DIE), in DWARF order, and for their children
 * where visit asks for them. */
enum die_scan_result
probe_die_scan(Dwarf_Die *root,
               enum die_scan_step (*visit)(const struct die_scanned *die, void *arg), void *arg);

/* The address right after die and its children (where its next sibling is, or the null entry that
 * ends its list): where its DW_AT_sibling leads when it has one (as libdw steps), else right
 * after children_end when given (the null entry that closed its children, as a walk of them
 * found it), else past its children as a scan finds them. NULL when the scan cannot read die or
 * its children (or the unit ends first), or its DW_AT_sibling leads back into it. */
const void *probe_die_after(Dwarf_Die *die, const void *children_end);

/* Sets die->abbrev (when NULL) to its abbreviation, as libdw's look-up would, from the scans'
 * table of its unit; left NULL when the scan cannot read the code. */
void probe_die_known_abbrev(Dwarf_Die *die);

/* The address just past die's unit, from the scans' table of it (kept for the units used last);
 * NULL when the unit's header cannot be read. */
const void *probe_die_unit_end(Dwarf_Die *die);

/* Frees the tables of the units scanned last (call after a read). */
void probe_die_scan_release(void);

/* ---- dwarf_errors.c -----------------------------------------------------------------------------
 * Corrupt DWARF found while reading: libdw answers -1 or NULL where the data is damaged (a bad
 * abbreviation, a reference outside its unit, a string offset outside .debug_str), which a walk
 * would otherwise take for "no more children" or "no such attribute". The checked calls below
 * answer as libdw does and also keep the first such failure, per thread, for the reader to report.
 */

/* Forgets any recorded failure, and starts a new read (read_generation.c): call before a read. */
void probe_dwarf_errors_reset(void);

/* Frees what the checks kept about the walk (the failure itself stays): call after a read. */
void probe_dwarf_errors_release(void);

/* The first failure recorded since the reset ("corrupt DWARF at DIE 0x2f: invalid DWARF"), or
 * NULL. */
const char *probe_dwarf_errors_first(void);

/* Records "corrupt DWARF at DIE <offset of die>: what" unless a failure is already recorded. */
void probe_dwarf_errors_note(Dwarf_Die *die, const char *what);

/* Records that the split unit of a skeleton (-gsplit-dwarf) was not found: its .dwo is named. */
void probe_dwarf_errors_missing_dwo(Dwarf_Die *skeleton);

/* dwarf_child, and a failure when libdw fails (a bad abbreviation) or the child is a unit's top
 * DIE (then 1, no children). */
int probe_checked_child(Dwarf_Die *die, Dwarf_Die *result);

/* dwarf_siblingof, and a failure when libdw fails, when the unit ends before the list the DIE
 * belongs to does (its terminating null entry is missing: a cut or mislabelled unit), or when
 * the sibling is a unit's top DIE (then 1, no sibling). */
int probe_checked_siblingof(Dwarf_Die *die, Dwarf_Die *result);

/* probe_checked_siblingof for a walk that reads lists of children to their end. The next DIE is
 * found from die's bytes (die_scan.c: by its DW_AT_sibling, else past its children), libdw's
 * step only where they cannot be read; children_end: NULL, or the null entry that closed die's
 * children (as *end gave it at the last of them), which saves reading them again. At the end of
 * die's list (1), *end (unless end is NULL) is the null entry that closed it; else NULL. */
int probe_checked_next(Dwarf_Die *die, const void *children_end, Dwarf_Die *result,
                       const void **end);

/* The null entry (its addr and cu only) that ended the children of unit cu's top DIE, when a
 * walk of them with probe_checked_child and probe_checked_siblingof got there since the reset;
 * false otherwise. */
bool probe_dwarf_errors_top_end(Dwarf_CU *cu, Dwarf_Die *end);

/* dwarf_formref_die, and a failure when the reference cannot be followed (outside its unit or
 * section, or a type signature no unit has) or when a DW_AT_type or DW_AT_signature leads to a
 * DIE that is not a type (a reference into the middle of a DIE); NULL then. */
Dwarf_Die *probe_checked_formref_die(Dwarf_Attribute *attr, Dwarf_Die *result);

/* dwarf_peel_type for the type of an object (a member, an array element, a base class), and a
 * failure when libdw fails (a broken reference in the chain), the chain ends in void, or the
 * type reached is a base type without a size or with one no ABI has (a 13-byte int). */
int probe_checked_peel_type(Dwarf_Die *die, Dwarf_Die *result);

/* Records a failure when child, of tag tag, is a DIE a struct, class or union cannot hold in its
 * unit's language: in C members and the unnamed types clang nests, in C++ also bases, methods,
 * static members, template parameters and any type; anything in other languages. Also when a
 * member or base has no DW_AT_type. */
void probe_checked_aggregate_child(Dwarf_Die *child, int tag);

/* dwarf_diename, and a failure when die has a name that cannot be read (a string offset outside
 * its section) or is empty. */
const char *probe_checked_diename(Dwarf_Die *die);

/* ---- attributes.c -------------------------------------------------------------------------------
 * The DWARF attributes layouts are read from, as the measures, the C++ bases and the spellings of
 * types all read them: a constant, a member's offset, the type a DIE refers to, and the definition
 * a type unit's declaration stands for. Through the checked calls (dwarf_errors.c), so that a
 * broken reference is reported, not taken for an absent one. */

/* The attribute name of die (or of the declaration it completes) as an unsigned constant. */
bool probe_udata(Dwarf_Die *die, unsigned name, Dwarf_Word *out);

/* DW_AT_data_member_location: a constant, or an expression that is one DW_OP_plus_uconst. */
bool probe_member_location(Dwarf_Die *die, Dwarf_Word *offset);

/* die itself, or, when it is a type unit's declaration (DW_AT_signature), the definition. */
Dwarf_Die *probe_resolve_signature(Dwarf_Die *die);

/* The type die refers to (DW_AT_type, also through the declaration it completes), resolved as
 * probe_resolve_signature does, in out; NULL when it has none or the reference is broken. */
Dwarf_Die *probe_type_of(Dwarf_Die *die, Dwarf_Die *out);

/* ---- abbrev_check.c -----------------------------------------------------------------------------
 * Checking one abbreviation table (DWARF 5, section 7.5.3) from its bytes: known tags, attributes
 * and forms, each attribute in a form of its class and on a tag that has it, a children flag of 0
 * or 1 and none on a tag that never has children, no C++ tag in a C unit. */

/* The language of the unit whose table it is, for what only some producers write: a C unit has
 * no C++ tag; Go's linker gives a function type a size (a func value's) and writes an
 * interface's typedef with a children flag (its list of children empty). */
enum abbrev_language { ABBREV_OTHER, ABBREV_C, ABBREV_GO };

/* NULL when the table that starts at start (and lies before end) is well formed up to its
 * closing null entry, else what is wrong: a constant string, or why (filled) for details. */
const char *probe_abbrev_table_problem(const unsigned char *start, const unsigned char *end,
                                       enum abbrev_language language, char *why, size_t size);

/* ---- unit_check.c -------------------------------------------------------------------------------
 * Checks of a whole unit that libdw leaves undone, made after the reader walked it: its
 * abbreviation table holds only known tags, attributes and forms, each attribute in a form of its
 * class; and its DIEs end where the unit does (a damaged abbreviation or sibling reference makes
 * libdw end the walk early, silently, and the rest of the unit would go unread). */

/* Records the first problem of the unit whose top DIE is root (dwarf_errors.c). Call right after
 * walking the unit: root's children with probe_checked_child and probe_checked_siblingof, to their
 * end. */
void probe_unit_check(Dwarf_Die *root);

/* ---- validate.c ---------------------------------------------------------------------------------
 * Whether a layout read may be trusted: libdw met no corrupt DWARF on the way (dwarf_errors.c), and
 * every type read is one a compiler can produce. A damaged size or offset is often still
 * well-formed DWARF, so the second check catches what libdw cannot. */

/* False, with "binary: what is wrong" (one line) in error, when the read met corrupt DWARF or a
 * type has a member past its end, a bit-field past its end, or two data members overlapping
 * outside a union. */
bool probe_layout_checked(const struct layout_set *set, char *error, size_t size);

/* The same test on one type: NULL when it is a possible layout, else what is wrong, written to
 * why. */
const char *probe_layout_type_problem(const struct layout_type *t, char *why, size_t size);

/* ---- gdb_index.c --------------------------------------------------------------------------------
 * Reading a .gdb_index section (gdb-add-index, lld and gold --gdb-index; format documented in the
 * gdb manual, "Index Section Format"): which compilation units define a type name. libdw has no
 * reader for it, hence this one. */

struct gdb_index {
    const unsigned char *data;
    size_t size;
    uint32_t cu_count;          /* entries of the CU list; type units follow them */
    const unsigned char *cus;   /* pairs of 64-bit (offset in .debug_info, length) */
    const unsigned char *table; /* pairs of 32-bit (name offset, CU vector offset) */
    uint32_t slots;             /* a power of two */
    const unsigned char *pool;  /* the constant pool */
    size_t pool_size;
};

/* Finds and checks the index of the file dw was read from; false when there is none or it is not
 * a version 7 or 8 index. */
bool probe_gdb_index_open(Dwarf *dw, struct gdb_index *out);

/* The .debug_info offsets of the compilation units the index names as defining type `name`,
 * at most max of them. Returns how many, 0 when the name is absent, or -1 when an entry points
 * into a type unit or out of bounds (the caller then reads everything). */
int probe_gdb_index_type_units(const struct gdb_index *index, const char *name, uint64_t *offsets,
                               int max);

/* ---- debug_names.c ------------------------------------------------------------------------------
 * Reading a DWARF 5 name index (.debug_names, DWARF 5 section 6.1.1: clang -gpubnames, lld,
 * gdb-add-index -dwarf-5): which units define a struct, class or union of a given name. libdw has
 * no reader for it, hence this one. Unlike .gdb_index it lists every defining unit, so a lookup
 * through it still sees ODR conflicts. */

/* The offsets of the unit headers of the units (compile units and local type units) that the
 * index of the file dw was read from names as defining a struct, class or union called
 * names[i], for every i, at most max of them. A name is looked up as given and by its last
 * component ("Inner" of "lc::Outer::Inner", as producers index nested names). 0 (read every
 * unit) when the file has no such index, a name is a glob or absent from it, an entry is in a
 * foreign type unit (split DWARF) or the index is damaged. */
size_t probe_debug_names_units(Dwarf *dw, const char *const *names, size_t count, uint64_t *units,
                               size_t max);

/* ---- keyed_dies.c -------------------------------------------------------------------------------
 * DIEs kept under a 64-bit key (a name's hash, a place in the source), sorted once and then looked
 * up by key: the indexes the naming of C++ types builds on first need (function_defs.c,
 * stand_ins.c). And the walk they share, over every compile unit's root. */

struct keyed_die {
    uint64_t key;
    Dwarf_Die die;
};

struct keyed_dies {
    struct keyed_die *items;
    size_t count, capacity;
};

/* False when out of memory. */
bool probe_keyed_dies_add(struct keyed_dies *k, uint64_t key, Dwarf_Die *die);
void probe_keyed_dies_sort(struct keyed_dies *k);
/* The first item with key (or the place it would take): the items with key follow it. */
size_t probe_keyed_dies_first(const struct keyed_dies *k, uint64_t key);
void probe_keyed_dies_free(struct keyed_dies *k);

/* FNV-1a of a string, or of its first n bytes: the key of a name. */
uint64_t probe_keyed_hash(const char *s);
uint64_t probe_keyed_hash_n(const char *s, size_t n);

/* Calls visit with the root DIE of every compile unit of dw (a skeleton's split unit; type units
 * left out) until it returns false; false then. */
bool probe_each_compile_unit(Dwarf *dw, bool (*visit)(Dwarf_Die *root, void *arg), void *arg);

/* ---- needed_libs.c ------------------------------------------------------------------------------
 * The shared libraries a binary needs (DT_NEEDED, and what those need in turn), found on disk as
 * the dynamic linker would find them: LD_LIBRARY_PATH, the binary's DT_RUNPATH (or DT_RPATH) with
 * $ORIGIN, the directories /etc/ld.so.conf.d names, then the system's. Only libraries that export
 * C++ symbols are kept: a class a C++ binary only declares (its vtable or its explicit
 * instantiation is in a library) is defined in one of those. */

struct needed_libs {
    char **paths; /* in breadth-first order of DT_NEEDED, each once */
    size_t count;
};

/* The C++ libraries binary needs into out (none when binary is no dynamic ELF file). False only
 * when out of memory. */
bool probe_needed_libs_find(const char *binary, struct needed_libs *out);
void probe_needed_libs_free(struct needed_libs *libs);

/* ---- decl_path.c --------------------------------------------------------------------------------
 * Where a type is defined, as a path a CI system can point at: DWARF may name the file relative to
 * the unit's compilation directory ("../libio/bits/types/struct_FILE.h"). */

/* file joined to comp_dir when relative (comp_dir may be NULL), with "." and ".." resolved
 * lexically; malloc'd, NULL when out of memory. */
char *probe_decl_path(const char *file, const char *comp_dir);

#endif
