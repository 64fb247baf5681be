/* The measuring room: a type's size and alignment as the x86-64 and Itanium C++ ABIs give them,
 * an aggregate's members with their offsets, sizes and bit positions (members.c, and the three it
 * calls, none of which calls it back: virtual_bases.c, member_sizes.c, derived_sizes.c; the list
 * they build, member_list.c), C++ base subobjects placed (cxx_bases.c), holes and padding
 * (holes.c: layout_find_holes, public in probe/layout.h), and the definitions of the classes a
 * unit only declares, in the binary's other units (type_defs.c) or the libraries it needs
 * (library_defs.c). Uses naming/ (a member's type spelled), reading/, spelling/ and base/. Files:
 * the .c files of measuring/. */
#ifndef PROBE_ROOM_MEASURING_H
#define PROBE_ROOM_MEASURING_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../naming/probe_naming.h"
#include "probe/layout.h"

/* ---- type_defs.c --------------------------------------------------------------------------------
 * The definition of a C++ class that a unit only declares. GCC declares explicitly instantiated
 * templates (std::basic_ios<char>, std::string) and clang declares classes whose vtable another
 * unit emits, so a member or base of such a type has no size or layout in its own unit: its
 * definition is in another unit, found by qualified name as gdb finds it. */

struct type_defs;

/* Definitions among the units of dw (their index is built on the first look-up). */
struct type_defs *probe_type_defs_new(Dwarf *dw);
void probe_type_defs_free(struct type_defs *defs);

/* The definition of the class declared by decl (a struct, class or union with
 * DW_AT_declaration): true with *def set when some unit defines a class of that qualified name. */
bool probe_type_defs_find(struct type_defs *defs, Dwarf_Die *decl, Dwarf_Die *def);

/* ---- library_defs.c -----------------------------------------------------------------------------
 * Definitions of the classes a binary only declares and none of its units defines, from the DWARF
 * of the C++ libraries it needs (needed_libs.c): g++ describes a class only where its vtable is
 * emitted (std::runtime_error: in libstdc++) and leaves explicitly instantiated templates to the
 * library that instantiates them (std::stringstream); clang leaves out the definitions of such
 * types too (std::string's _Alloc_hider). A library's DWARF is its own, its separate debug file
 * (build id, .gnu_debuglink, /usr/lib/debug), or the debug build of the same library that Debian's
 * -dbg packages install beside it in debug/ (libstdc++6-12-dbg:
 * /usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30). Libraries are listed and opened on the
 * first declaration not found in the binary, one by one until one defines it. */

struct library_defs;

/* For the libraries binary needs (nothing is read yet); NULL when out of memory. */
struct library_defs *probe_library_defs_new(const char *binary);
void probe_library_defs_free(struct library_defs *libs);

/* The definition of the class declared by decl in one of the libraries, by qualified name. */
bool probe_library_defs_find(struct library_defs *libs, Dwarf_Die *decl, Dwarf_Die *def);

/* The file whose DWARF holds def when it is one of the libraries', else NULL. */
const char *probe_library_defs_source(const struct library_defs *libs, const Dwarf_Die *def);

/* ---- cxx_bases.c --------------------------------------------------------------------------------
 * Where C++ base class subobjects lie, per the Itanium C++ ABI (2.4, "Non-POD Class Types"): DWARF
 * gives a virtual base's offset only as an expression that reads the object's vtable, so the
 * complete object's layout is recomputed from the classes' non-virtual parts, which DWARF does give
 * (their sizes, alignments, and the offsets of their members and non-virtual bases). */

/* How the caller sizes and aligns a member's type (its own rules for arrays, type units...). */
struct cxx_measure {
    uint64_t (*size)(void *context, Dwarf_Die *type);
    uint64_t (*align)(void *context, Dwarf_Die *type);
    /* The definition of a class the unit only declares (in another unit), false if none. */
    bool (*define)(void *context, Dwarf_Die *decl, Dwarf_Die *def);
    void *context;
};

struct cxx_vbase {
    Dwarf_Die die;   /* the virtual base class */
    uint64_t offset; /* in the complete object */
    uint64_t size;   /* the bytes it takes there: its non-virtual size */
};

/* What is known of the classes met so far, by DIE: create one per read, free it after. */
struct cxx_cache;
struct cxx_cache *probe_cxx_cache_new(const struct cxx_measure *measure);
void probe_cxx_cache_free(struct cxx_cache *cache);

/* A DW_TAG_inheritance entry for a virtual base. */
bool probe_cxx_is_virtual_inheritance(Dwarf_Die *inheritance);

/* Whether the class has virtual bases, direct or inherited. */
bool probe_cxx_has_virtual_bases(struct cxx_cache *cache, Dwarf_Die *cls);

/* The virtual bases of a complete object of class cls, direct and indirect, each once however
 * often it is inherited, in inheritance graph order, at their offsets. Returns how many (*out is
 * malloc'd when some), or -1 when out of memory. */
int probe_cxx_virtual_bases(struct cxx_cache *cache, Dwarf_Die *cls, struct cxx_vbase **out);

/* The bytes a base subobject of class cls takes (nvsize): its data without its virtual bases,
 * and without its tail padding unless it is a POD, whose padding a derived class never reuses;
 * 0 for an empty class. */
uint64_t probe_cxx_base_size(struct cxx_cache *cache, Dwarf_Die *cls);

/* The fewest bytes a potentially-overlapping subobject of class cls (a base, or a member that
 * may be [[no_unique_address]]: DWARF does not say) can take (ABI 2.4 II): none when the class
 * could be empty (no data but of members that could be empty themselves: a union of empty
 * [[no_unique_address]] members is one), else its data size with each such member taking its
 * own least; a POD's sizeof. UINT64_MAX when the class cannot be measured. */
uint64_t probe_cxx_share_size(struct cxx_cache *cache, Dwarf_Die *cls);

/* Whether cls is an empty class (ABI 1.1: no data members, virtual functions, virtual bases or
 * non-empty bases): as a base it takes no byte of its own. */
bool probe_cxx_is_empty(struct cxx_cache *cache, Dwarf_Die *cls);

/* Whether the layout of cls rests on a class only declared and defined nowhere found (itself, a
 * base, a member's class, at any depth): then where its virtual bases lie is not known, nor
 * whether its tail padding holds some, nor what it shares. Also true when cls cannot be
 * measured. */
bool probe_cxx_is_unknown(struct cxx_cache *cache, Dwarf_Die *cls);

/* Whether a base of cls is such a class (probe_cxx_is_unknown): its virtual bases may then lie in
 * the tail of cls, unplaced. */
bool probe_cxx_base_unknown(struct cxx_cache *cache, Dwarf_Die *cls);

/* ---- type_measure.c ---------------------------------------------------------------------------
 * Sizes and alignments of DWARF types, and the definitions of declared classes they look in. */

/* The definitions probe_defined looks in: those of the read under way, or none (NULL). */
void probe_measure_use_definitions(struct type_defs *defs, struct library_defs *libs);

/* A class this unit only declares: its definition in another unit (type_defs.c) or in a library
 * (library_defs.c), else itself. */
Dwarf_Die *probe_defined(Dwarf_Die *die);

/* The file whose DWARF holds def when it is a library's (library_defs.c), else NULL. */
const char *probe_defined_in(Dwarf_Die *def);

/* The class (or union) a type is, or holds an array of, qualifiers and typedefs aside, when it
 * is only declared and defined nowhere: its size is not known. */
bool probe_undefined_class(Dwarf_Die *type, Dwarf_Die *cls);

/* A static data member (DW_AT_external, or DW_AT_declaration when it has internal linkage, in
 * an anonymous namespace) takes no room in its class. */
bool probe_is_static_member(Dwarf_Die *member);

/* Bytes of a type; arrays are counted here because libdw cannot size an array whose element is
 * a type-unit declaration. */
uint64_t probe_type_size(Dwarf_Die *die, int depth);

/* Alignments already derived, by DIE address (unique across the main file and split units): a
 * struct's alignment is the largest of its members', and without this every use of a struct
 * would walk its members again, nested structs included. */
struct align_cache {
    struct die_table slots; /* of struct align_slot (type_measure.c) */
    struct cxx_cache *cxx;  /* C++ classes' base layouts (cxx_bases.c), made on first need */
};

uint64_t probe_type_align(struct align_cache *cache, Dwarf_Die *die, int depth);
uint64_t probe_aggregate_align(struct align_cache *cache, Dwarf_Die *die, int depth,
                               uint64_t *natural, bool *unknown);
struct cxx_cache *probe_cxx_of(struct align_cache *cache);

/* ---- member_list.c ------------------------------------------------------------------------------
 * The member list of a type being read: appended to by members.c, spliced into by virtual_bases.c
 * (a virtual base and its members go where their offset puts them). Apart from both, so that
 * neither file calls the other for it. */

/* Appends m to t's members (t owns m's strings after). False when out of memory (m is then the
 * caller's to free). */
bool probe_add_member(struct layout_type *t, struct layout_member m);

/* Moves block's members into t's at position at, block left empty. False when out of memory
 * (both unchanged). */
bool probe_splice_members(struct layout_type *t, size_t at, struct layout_type *block);

/* ---- members.c --------------------------------------------------------------------------------
 * The members of one struct, class or union definition into a layout_type; members.c calls
 * virtual_bases.c, member_sizes.c and derived_sizes.c, none of which calls it. */

/* Where a member goes: the offset of the aggregate it belongs to (from the start of the type
 * being laid out), its name prefix and nesting depth, and whether to descend further. */
struct member_scope {
    uint64_t base;
    const char *prefix;
    uint8_t depth;
    bool expand;
    struct align_cache *aligns;
    bool light;    /* only what same_definition compares: no type names, no alignment */
    bool complete; /* a complete object (not a base subobject): its virtual bases are listed */
};

bool probe_read_aggregate(struct align_cache *cache, Dwarf_Die *die, const char *name, bool expand,
                          bool light, struct layout_type *t);

/* ---- virtual_bases.c --------------------------------------------------------------------------
 * The virtual bases of a complete object among t's members from first on; a base's own members,
 * under --expand, are read by read_members (members.c's, passed down so that the two files do not
 * call each other). */
typedef bool (*probe_members_reader)(struct layout_type *t, Dwarf_Die *aggregate,
                                     struct member_scope scope);
bool probe_add_virtual_bases(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                             struct member_scope scope, probe_members_reader read_members);

/* ---- member_sizes.c ---------------------------------------------------------------------------
 * The bytes a class-type member or base really occupies where others share its tail padding or
 * its empty self, or its virtual bases lie elsewhere. */
bool probe_any_overlap(const struct layout_type *t, size_t first, uint8_t depth);
bool probe_settle_sizes(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                        struct member_scope scope);

/* ---- derived_sizes.c --------------------------------------------------------------------------
 * The size of a member whose type is defined nowhere the reader looked: the room the layout
 * leaves it. */
void probe_derive_sizes(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                        struct member_scope scope);

#endif
