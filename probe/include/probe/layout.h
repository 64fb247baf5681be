/* Struct, class and union layouts read from DWARF with elfutils: sizes, alignment, members with
 * offsets and bit-fields, holes, tail padding. The layout is what the compiler emitted, nothing
 * is recomputed from source rules except alignment when DWARF does not state it, and what DWARF
 * leaves to the Itanium C++ ABI: where virtual bases lie in the complete object, and how much of
 * a base its derived class may reuse. */
#ifndef PROBE_LAYOUT_H
#define PROBE_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct layout_member {
    char *name;         /* "" for an anonymous struct or union member */
    char *type;         /* C or C++ spelling, qualifiers included */
    uint64_t offset;    /* bytes from the start of the enclosing type */
    uint64_t size;      /* bytes it takes here (for a bit-field: its storage unit); less than
                           type_size where it shares its storage: an empty base, or a base or
                           [[no_unique_address]] member overlapped by later members (docs/
                           layout-format.md) */
    uint64_t type_size; /* sizeof its type, as gdb's ptype /o prints it; 0 when unknown */
    uint64_t align;     /* its type's alignment, or the member's alignas; 0 when not read (a
                           layout read back from JSON) */
    bool size_derived;  /* its type is only declared, its definition found nowhere: size is the
                           room the layout leaves it (to the next member or the end), at most */
    bool artificial;    /* made by the compiler, not declared: the vtable pointer */
    char *defined_in;   /* the file whose DWARF defines its type when the binary only declares
                           it (a library's debug file), else NULL */
    int64_t bit_offset; /* bits from the start of the type, or -1 when not a bit-field */
    uint32_t bit_size;  /* bits, 0 when not a bit-field */
    bool is_base;       /* a C++ base class subobject */
    bool is_virtual;    /* a virtual base, at its offset in the complete object (after the
                           non-virtual part, Itanium C++ ABI), listed once however often it is
                           inherited; its size is its non-virtual size */
    bool is_indirect;   /* a virtual base inherited through another base (not in the class's own
                           base list) */
    uint8_t depth;      /* 0 for the type's own members; n for members of members (--expand),
                           named "outer.inner", with offsets from the start of the type */
    size_t name_at;     /* where the name goes in type ("char[3]": 4, "void (*)(int)": 7, "int":
                           3); 0 when unknown (a layout read back from JSON): see
                           src/output/declarator.c */
    uint8_t access;     /* a base class's DW_ACCESS_*: 1 public, 2 protected, 3 private */
    bool inline_only;   /* a member of an unnamed struct or union member, read without --expand
                           only so that text shows it inline (as pahole does): JSON, holes and
                           baselines leave it out */
    bool variant_part;  /* the unnamed union that stands for a Rust enum's variants
                           (DW_TAG_variant_part), made by qaudit: no DWARF member of its own */
};

struct layout_hole {
    uint64_t after_member; /* index of the member the hole follows */
    uint64_t bits;         /* size in bits */
    bool bit_hole;         /* starts or ends inside a byte (around bit-fields); pahole counts these
                              apart from byte holes, and so does qaudit */
};

struct layout_type {
    char *name;       /* fully qualified: "connection", "ns::Queue<int, 1>" */
    const char *kind; /* "struct", "class" or "union" */
    uint64_t size, align;
    bool align_from_dwarf; /* DW_AT_alignment was present */
    bool align_unknown;    /* a member's class is only declared, defined nowhere found, and its
                              alignment may be more than the others': align is the least the
                              alignment can be */
    bool packed;           /* some member is less aligned than its type requires, or the size
                              is not a multiple of the members' alignment (align is then what
                              the offsets and the size allow: 4 under #pragma pack(4)) */
    struct layout_member *members;
    size_t member_count;
    struct layout_hole *holes;
    size_t hole_count;
    size_t byte_holes;    /* holes that start and end on byte boundaries */
    uint64_t hole_bytes;  /* their sum in bytes */
    uint64_t padding;     /* tail padding in bytes */
    bool padding_unknown; /* a base's class is only declared, defined nowhere found: the tail
                             may hold its virtual bases, so padding is at most this */
    bool odr_conflict;    /* another, different definition with the same name exists */
    bool unit_local;      /* in an anonymous namespace or a function of internal linkage: each
                             unit's is its own type, so two that differ are no ODR conflict */
    char *decl_file;    /* DW_AT_decl_file of the definition (a path, as DWARF names it), or NULL */
    unsigned decl_line; /* DW_AT_decl_line, 0 when unknown */
};

/* A C++ typedef or using alias that a --type name (layout_options.names) named: what it names. */
struct layout_alias {
    char *name;   /* the alias, qualified: "std::string" */
    char *target; /* the name of the struct, class or union it stands for (a layout_type's) */
};

struct layout_set {
    char *binary;
    struct layout_type *types;
    size_t count, capacity;
    struct layout_alias *aliases; /* typedefs of the types wanted by name */
    size_t alias_count;
    size_t units_read, units_total; /* compilation and type units walked, and present */
    const char *index_used;         /* when an index chose the units (layout_options.names):
                                       " (chosen by .gdb_index)" or " (chosen by .debug_names)",
                                       for --stats; else NULL */
};

enum layout_status { LAYOUT_OK = 0, LAYOUT_INPUT_ERROR = 2 };

/* Reads every named struct, class and union defined in path (or in the separate debug file
 * debug_file, or the one found by build id or .gnu_debuglink). A definition met in several
 * compilation units is kept once; two different definitions under one name are both kept and
 * marked odr_conflict. Holes and padding are computed from the type's own members only. On
 * error returns LAYOUT_INPUT_ERROR with one line in error. */
struct layout_options {
    const char *debug_file; /* read DWARF from here instead of from path (may be NULL) */
    bool expand;            /* also list the members of struct/union members, nested */
    /* The types wanted, by name or glob as --type takes them (may be NULL): only the types
     * they match (type_match.h), and those a typedef of that name stands for, are read; the
     * others are passed over before they are named where their own name shows they cannot
     * match. With a .debug_names or .gdb_index that names all of them, only the units it names
     * are walked. Without an index, or for a name it lacks, every unit is. The .gdb_index names
     * one unit per type, so ODR conflicts between units are then only found by a full read. */
    const char *const *names;
    size_t name_count;
};

enum layout_status layout_read(const char *path, const struct layout_options *options,
                               struct layout_set *out, char *error, size_t error_size);

/* layout_read for --first: with names and without an index, stops at the first unit after which
 * every name has a definition (as pahole -C does) instead of reading every unit. Fast on a large
 * file whose wanted types come early; a different definition in a later unit (an ODR conflict)
 * goes unseen. */
enum layout_status layout_read_first(const char *path, const struct layout_options *options,
                                     struct layout_set *out, char *error, size_t error_size);

/* layout_read, and where each type is defined (decl_file, decl_line: for the gate's
 * annotations), which takes the line tables a plain read leaves out. */
enum layout_status layout_read_located(const char *path, const struct layout_options *options,
                                       struct layout_set *out, char *error, size_t error_size);

/* Fills holes, hole_bytes and padding from the members (called by layout_read). */
void layout_find_holes(struct layout_type *type);

void layout_free(struct layout_set *set);

/* Glob match of a type name against a --type pattern ("connection", "ns::*"). */
bool layout_name_matches(const char *pattern, const char *name);

#endif
