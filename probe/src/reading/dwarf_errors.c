/* The checked libdw calls of the layout walk and the first corruption they met: libdw's own
 * failures, and what the calls check beyond libdw (where lists of children end, the kinds of DIE
 * met where, references landing on types). All state is thread-local, so readers on two threads
 * (a report resolving several binaries) never see each other's. */
#include "probe_reading.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local struct {
    bool set;
    char message[256];
} first;

/* The lists of children being walked, and where each must end: a stack, as walks go depth first.
 * A walk of a DIE's children starts with probe_checked_child (a push) and steps with
 * probe_checked_siblingof from the child last reached (the cursor); a step finds its list by its
 * cursor, and lists above it were left part way (a search that stopped at what it looked for): they
 * are dropped. A list must end right before its parent's DW_AT_sibling, when the parent has one;
 * the end of a unit's top list is kept for probe_unit_check, which knows where the unit ends.
 * Deeper than the stack, lists go unchecked. */
#define LISTS_KEPT 64
static _Thread_local struct {
    struct list {
        Dwarf_CU *cu;
        const void *cursor;  /* the child reached */
        const void *sibling; /* where the parent's DW_AT_sibling points, or NULL */
        Dwarf_Off parent;    /* the parent's offset, for the message */
        bool top;            /* the parent is a unit's top DIE */
    } lists[LISTS_KEPT];
    unsigned depth;
    /* Each unit's top list end, by unit (open addressing; a unit's top list may be walked well
     * before probe_unit_check runs on it: when another unit's type led into it). */
    struct top_end {
        Dwarf_CU *cu;
        const void *end; /* the null entry that ended the top DIE's children */
    } * tops;
    size_t top_capacity, top_count;
    struct {
        Dwarf_CU *cu;
        int language; /* enum language */
    } last_unit;      /* the unit language_of was last asked about */
} walks;

static struct top_end *top_slot(struct top_end *table, size_t capacity, Dwarf_CU *cu)
{
    size_t h = (size_t)(((uintptr_t)cu >> 4) * 0x9E3779B97F4A7C15ull >> 20);
    for (size_t i = h & (capacity - 1);; i = (i + 1) & (capacity - 1))
        if (table[i].cu == cu || table[i].cu == NULL)
            return &table[i];
}

/* Remembers where cu's top list ended (forgotten only when out of memory: then unchecked). */
static void remember_top_end(Dwarf_CU *cu, const void *end)
{
    if (2 * (walks.top_count + 1) > walks.top_capacity) {
        size_t capacity = walks.top_capacity ? 2 * walks.top_capacity : 256;
        struct top_end *grown = calloc(capacity, sizeof *grown);
        if (grown == NULL)
            return;
        for (size_t i = 0; i < walks.top_capacity; i++)
            if (walks.tops[i].cu != NULL)
                *top_slot(grown, capacity, walks.tops[i].cu) = walks.tops[i];
        free(walks.tops);
        walks.tops = grown;
        walks.top_capacity = capacity;
    }
    struct top_end *slot = top_slot(walks.tops, walks.top_capacity, cu);
    walks.top_count += slot->cu == NULL;
    *slot = (struct top_end){cu, end};
}

static bool is_unit_tag(int tag)
{
    return tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit || tag == DW_TAG_type_unit ||
           tag == DW_TAG_skeleton_unit;
}

/* Tags that only live inside another DIE: met among a unit's top DIEs, they are a damaged tag,
 * or the walk lost its place. */
static bool nested_only(int tag)
{
    switch (tag) {
    case DW_TAG_member:
    case DW_TAG_inheritance:
    case DW_TAG_enumerator:
    case DW_TAG_formal_parameter:
    case DW_TAG_unspecified_parameters:
    case DW_TAG_subrange_type:
    case DW_TAG_generic_subrange:
    case DW_TAG_template_type_parameter:
    case DW_TAG_template_value_parameter:
    case DW_TAG_variant:
    case DW_TAG_variant_part:
    case DW_TAG_lexical_block:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_label:
    case DW_TAG_call_site:
    case DW_TAG_call_site_parameter:
    case DW_TAG_GNU_call_site:
    case DW_TAG_GNU_call_site_parameter:
    case DW_TAG_GNU_template_template_param:
    case DW_TAG_GNU_template_parameter_pack:
    case DW_TAG_GNU_formal_parameter_pack:
    case DW_TAG_friend:
    case DW_TAG_access_declaration:
    case DW_TAG_catch_block:
    case DW_TAG_try_block:
        return true;
    default:
        return false;
    }
}

/* A DIE reached among a unit's top DIEs. */
static void top_child(Dwarf_Die *child)
{
    if (nested_only(dwarf_tag(child)))
        probe_dwarf_errors_note(
            child, "a DIE that only lives inside another is among its unit's top DIEs");
}

static void list_starts(Dwarf_Die *parent, Dwarf_Die *first)
{
    Dwarf_Attribute attr;
    Dwarf_Die sibling;
    const void *after = dwarf_attr(parent, DW_AT_sibling, &attr) != NULL &&
                                dwarf_formref_die(&attr, &sibling) != NULL
                            ? sibling.addr
                            : NULL;
    bool top = is_unit_tag(dwarf_tag(parent));
    if (top)
        top_child(first);
    if (walks.depth < LISTS_KEPT)
        walks.lists[walks.depth++] =
            (struct list){parent->cu, first->addr, after, dwarf_dieoffset(parent), top};
}

/* The list whose cursor is die, the lists above it dropped; NULL when none is. */
static struct list *list_at(Dwarf_Die *die)
{
    for (unsigned i = walks.depth; i-- > 0;) {
        struct list *l = &walks.lists[i];
        if (l->cursor == die->addr && l->cu == die->cu) {
            walks.depth = i + 1;
            return l;
        }
    }
    return NULL;
}

/* The walk stepped from die to next, or to the list's null entry at next->addr (end). */
static void list_steps(Dwarf_Die *die, Dwarf_Die *next, bool end)
{
    struct list *l = list_at(die);
    if (l == NULL)
        return;
    if (!end) {
        l->cursor = next->addr;
        if (l->top)
            top_child(next);
        return;
    }
    if (l->sibling != NULL && (const char *)next->addr + 1 != (const char *)l->sibling) {
        char why[128];
        snprintf(why, sizeof why, "the children of DIE 0x%llx do not end where its sibling starts",
                 (unsigned long long)l->parent);
        probe_dwarf_errors_note(&(Dwarf_Die){.addr = next->addr, .cu = die->cu}, why);
    }
    if (l->top)
        remember_top_end(die->cu, next->addr);
    walks.depth--; /* l is on top (list_at dropped what was above) */
}

void probe_dwarf_errors_reset(void)
{
    probe_read_generation_next();
    first.set = false;
    first.message[0] = '\0';
    probe_dwarf_errors_release();
    dwarf_errno(); /* libdw's own last error, so a stale one is never reported */
}

const char *probe_dwarf_errors_first(void)
{
    return first.set ? first.message : NULL;
}

void probe_dwarf_errors_note(Dwarf_Die *die, const char *what)
{
    if (first.set)
        return;
    first.set = true;
    snprintf(first.message, sizeof first.message, "corrupt DWARF at DIE 0x%llx: %s",
             (unsigned long long)dwarf_dieoffset(die), what);
}

static const char *string_attr(Dwarf_Die *die, unsigned name)
{
    Dwarf_Attribute attr;
    return dwarf_formstring(dwarf_attr(die, name, &attr));
}

void probe_dwarf_errors_missing_dwo(Dwarf_Die *skeleton)
{
    if (first.set)
        return;
    const char *dwo = string_attr(skeleton, DW_AT_dwo_name);
    const char *dir = string_attr(skeleton, DW_AT_comp_dir);
    if (dwo == NULL)
        dwo = string_attr(skeleton, DW_AT_GNU_dwo_name);
    first.set = true;
    snprintf(
        first.message, sizeof first.message,
        "the split DWARF file %s%s%s of unit 0x%llx is missing, unreadable or from another build "
        "(-gsplit-dwarf keeps the types there)",
        dwo && dir && dwo[0] != '/' ? dir : "", dwo && dir && dwo[0] != '/' ? "/" : "",
        dwo ? dwo : "(unnamed)", (unsigned long long)dwarf_dieoffset(skeleton));
}

/* A unit's top DIE met inside a unit: the walk lost its place (a sibling reference into the
 * middle of a DIE), or an abbreviation's tag was changed. Looking the tag up now also caches
 * the abbreviation in the DIE handed back, which the walk would look up next anyway. */
static bool found_in_place(Dwarf_Die *die)
{
    if (!is_unit_tag(dwarf_tag(die)))
        return true;
    probe_dwarf_errors_note(die, "a unit's top DIE inside a unit");
    return false;
}

/* die says it has children but its list is only the closing null entry: the DIE's sibling, when
 * it names one, must follow that entry (a damaged form of DW_AT_sibling makes libdw find a null
 * entry where the children were, and jump past them). */
static void empty_list(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Die sibling;
    const unsigned char *end = probe_die_attributes_end(die);
    if (end == NULL || dwarf_attr(die, DW_AT_sibling, &attr) == NULL ||
        dwarf_formref_die(&attr, &sibling) == NULL || *end != 0)
        return;
    if ((const unsigned char *)sibling.addr != end + 1)
        probe_dwarf_errors_note(die, "its children end where its sibling does not start");
}

int probe_checked_child(Dwarf_Die *die, Dwarf_Die *result)
{
    int rc = dwarf_child(die, result);
    if (rc == 0)
        probe_die_known_abbrev(result);
    if (rc < 0)
        probe_dwarf_errors_note(die, dwarf_errmsg(-1));
    else if (rc == 0 && !found_in_place(result))
        return 1;
    else if (rc == 0)
        list_starts(die, result);
    else if (rc > 0 && dwarf_haschildren(die))
        empty_list(die);
    return rc;
}

/* dwarf_siblingof's answer for die when the address right after it and its children is after:
 * the DIE there (0), else the end of die's list (1), next->addr the null entry that closes it, or
 * NULL when the unit ends first. */
static int step_to(Dwarf_Die *die, const unsigned char *after, Dwarf_Die *next)
{
    const unsigned char *end = probe_die_unit_end(die);
    if (end == NULL || after <= (const unsigned char *)die->addr || after > end)
        return dwarf_siblingof(die, next);
    *next = (Dwarf_Die){.cu = die->cu};
    if (after == end)
        return 1;
    next->addr = (void *)after;
    if (*after == 0)
        return 1;
    probe_die_known_abbrev(next);
    return 0;
}

int probe_checked_next(Dwarf_Die *die, const void *children_end, Dwarf_Die *result,
                       const void **end)
{
    Dwarf_Die next;
    if (end != NULL)
        *end = NULL;
    /* Where die and its children end, from their bytes (die_scan.c): libdw would look every DIE
     * below die up, where there is no DW_AT_sibling to jump by. */
    const unsigned char *after = probe_die_after(die, children_end);
    int rc = after != NULL ? step_to(die, after, &next) : dwarf_siblingof(die, &next);
    if (rc == 0 && !found_in_place(&next))
        return 1;
    if (rc == 0)
        list_steps(die, &next, false);
    if (rc == 0)
        *result = next;
    else if (rc < 0)
        probe_dwarf_errors_note(die, dwarf_errmsg(-1));
    else if (next.addr == NULL) /* libdw leaves it NULL when it ran off the unit's end */
        probe_dwarf_errors_note(die, "its unit ends inside the list of DIEs it belongs to");
    else {
        list_steps(die, &next, true);
        if (end != NULL)
            *end = next.addr;
    }
    return rc;
}

int probe_checked_siblingof(Dwarf_Die *die, Dwarf_Die *result)
{
    return probe_checked_next(die, NULL, result, NULL);
}

bool probe_dwarf_errors_top_end(Dwarf_CU *cu, Dwarf_Die *end)
{
    if (walks.top_capacity == 0 || cu == NULL)
        return false;
    struct top_end *slot = top_slot(walks.tops, walks.top_capacity, cu);
    if (slot->cu == NULL)
        return false;
    *end = (Dwarf_Die){.addr = (void *)slot->end, .cu = cu};
    return true;
}

void probe_dwarf_errors_release(void)
{
    probe_die_scan_release();
    free(walks.tops);
    memset(&walks, 0, sizeof walks);
}

/* Tags a DW_AT_type or DW_AT_signature may point to: the types of DWARF 5, and vendor tags (a
 * producer's own type kinds). Anything else means the reference landed off a type DIE. */
static bool is_type_tag(int tag)
{
    switch (tag) {
    case DW_TAG_array_type:
    case DW_TAG_class_type:
    case DW_TAG_enumeration_type:
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_string_type:
    case DW_TAG_structure_type:
    case DW_TAG_subroutine_type:
    case DW_TAG_typedef:
    case DW_TAG_union_type:
    case DW_TAG_ptr_to_member_type:
    case DW_TAG_set_type:
    case DW_TAG_subrange_type:
    case DW_TAG_base_type:
    case DW_TAG_const_type:
    case DW_TAG_file_type:
    case DW_TAG_packed_type:
    case DW_TAG_volatile_type:
    case DW_TAG_restrict_type:
    case DW_TAG_interface_type:
    case DW_TAG_unspecified_type:
    case DW_TAG_shared_type:
    case DW_TAG_rvalue_reference_type:
    case DW_TAG_template_alias:
    case DW_TAG_coarray_type:
    case DW_TAG_generic_subrange:
    case DW_TAG_dynamic_type:
    case DW_TAG_atomic_type:
    case DW_TAG_immutable_type:
        return true;
    default:
        return tag >= DW_TAG_lo_user;
    }
}

Dwarf_Die *probe_checked_formref_die(Dwarf_Attribute *attr, Dwarf_Die *result)
{
    Dwarf_Die *die = dwarf_formref_die(attr, result);
    unsigned name = attr ? dwarf_whatattr(attr) : 0;
    if (die != NULL && (name == DW_AT_type || name == DW_AT_signature) &&
        !is_type_tag(dwarf_tag(die))) {
        probe_dwarf_errors_note(die, "a type reference leads to a DIE that is no type");
        return NULL;
    }
    if (die == NULL && attr != NULL) {
        /* The attribute's DIE is not at hand: name the failure by the reference itself. */
        if (!first.set)
            snprintf(first.message, sizeof first.message,
                     "corrupt DWARF: a reference (attribute 0x%x) cannot be followed: %s",
                     dwarf_whatattr(attr), dwarf_errmsg(-1));
        first.set = true;
    }
    return die;
}

/* A base type's size as an ABI has them: a float of 2, 4, 8, 10 or 12 (x87) or 16 bytes, a
 * complex float of twice that; an integer of 1, 2, 4, 8 or 16 bytes or a multiple of 8 beyond
 * (_BitInt(N)); 0 only for a producer's empty type (Rust's unit type). DWARF requires
 * DW_AT_byte_size or DW_AT_bit_size. */
static bool base_size_plausible(Dwarf_Die *base)
{
    Dwarf_Attribute attr;
    Dwarf_Word size, encoding = 0;
    if (dwarf_attr(base, DW_AT_byte_size, &attr) == NULL)
        return dwarf_hasattr(base, DW_AT_bit_size);
    if (dwarf_formudata(&attr, &size) != 0)
        return false;
    if (dwarf_attr(base, DW_AT_encoding, &attr) != NULL)
        dwarf_formudata(&attr, &encoding);
    if (encoding == DW_ATE_complex_float && size % 2 == 0)
        size /= 2;
    else if (encoding != DW_ATE_float)
        return size <= 2 || size == 4 || size == 8 || size == 16 || size % 8 == 0;
    return size == 2 || size == 4 || size == 8 || size == 10 || size == 12 || size == 16;
}

int probe_checked_peel_type(Dwarf_Die *die, Dwarf_Die *result)
{
    int rc = dwarf_peel_type(die, result);
    if (rc < 0)
        probe_dwarf_errors_note(die, "its chain of qualifiers and typedefs is broken");
    else if (rc > 0) /* peeled for an object's type, and no object is of type void */
        probe_dwarf_errors_note(die,
                                "an object's type is void (a qualifier or typedef without a type)");
    else if (dwarf_tag(result) == DW_TAG_base_type && !base_size_plausible(result))
        probe_dwarf_errors_note(result, "a base type without a size an ABI gives");
    return rc;
}

enum language { OTHER, C, CPLUSPLUS };

/* DWARF 5's language codes (up to C17), the few DWARF 6 adds after them, and the vendors' that
 * are in use (MIPS assembler, RenderScript, Delphi). */
static bool known_language(Dwarf_Word code)
{
    return (code >= 1 && code <= 0x40) || code == 0x8001 || code == 0x8e57 || code == 0xb000;
}

/* The language of die's unit, remembered for the last unit asked about (until the release:
 * the Dwarf_CU of another read may have the same address). */
static enum language language_of(Dwarf_Die *die)
{
    if (walks.last_unit.cu == die->cu && die->cu != NULL)
        return (enum language)walks.last_unit.language;
    Dwarf_Die unit;
    Dwarf_Attribute attr;
    Dwarf_Word code = 0;
    if (dwarf_diecu(die, &unit, NULL, NULL) != NULL &&
        dwarf_attr(&unit, DW_AT_language, &attr) != NULL)
        dwarf_formudata(&attr, &code);
    if (!known_language(code))
        probe_dwarf_errors_note(die, "its unit has no language or one of no known code");
    walks.last_unit.cu = die->cu;
    walks.last_unit.language = code == DW_LANG_C89 || code == DW_LANG_C || code == DW_LANG_C99 ||
                                       code == DW_LANG_C11 || code == 0x002c /* C17 */
                                   ? C
                                   : probe_language_is_cxx(code) ? CPLUSPLUS : OTHER;
    return (enum language)walks.last_unit.language;
}

void probe_checked_aggregate_child(Dwarf_Die *child, int tag)
{
    enum language language = language_of(child);
    bool fits = language == OTHER || tag == DW_TAG_member || tag == DW_TAG_structure_type ||
                tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type;
    if (!fits && language == CPLUSPLUS) {
        switch (tag) {
        case DW_TAG_inheritance:
        case DW_TAG_subprogram:
        case DW_TAG_variable:
        case DW_TAG_typedef:
        case DW_TAG_class_type:
        case DW_TAG_template_type_parameter:
        case DW_TAG_template_value_parameter:
        case DW_TAG_template_alias:
        case DW_TAG_imported_declaration:
        case DW_TAG_imported_module:
        case DW_TAG_friend:
        case DW_TAG_access_declaration:
        case DW_TAG_variant_part:
            fits = true;
            break;
        default: /* any type (GCC puts "const X" in X), a producer's own (template packs) */
            fits = (is_type_tag(tag) && tag != DW_TAG_subrange_type) || tag >= DW_TAG_lo_user;
        }
    }
    if (language == C && tag != DW_TAG_member && dwarf_hasattr(child, DW_AT_name))
        fits = false; /* C's named types are hoisted to the unit's top, only unnamed ones nest */
    if (!fits)
        probe_dwarf_errors_note(child,
                                "a struct, class or union holds a DIE of a kind it cannot hold");
    else if ((tag == DW_TAG_member || tag == DW_TAG_inheritance) &&
             !dwarf_hasattr_integrate(child, DW_AT_type))
        probe_dwarf_errors_note(child, "a member or base without a type");
}

const char *probe_checked_diename(Dwarf_Die *die)
{
    const char *name = dwarf_diename(die);
    if (name == NULL && dwarf_hasattr_integrate(die, DW_AT_name))
        probe_dwarf_errors_note(die, dwarf_errmsg(-1));
    else if (name != NULL && name[0] == '\0') /* producers leave the attribute out instead */
        probe_dwarf_errors_note(die, "an empty name");
    return name;
}
