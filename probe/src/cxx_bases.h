/* Where C++ base class subobjects lie, per the Itanium C++ ABI (2.4, "Non-POD Class Types"): DWARF
 * gives a virtual base's offset only as an expression that reads the object's vtable, so the
 * complete object's layout is recomputed from the classes' non-virtual parts, which DWARF does
 * give (their sizes, alignments, and the offsets of their members and non-virtual bases). */
#ifndef PROBE_CXX_BASES_H
#define PROBE_CXX_BASES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
