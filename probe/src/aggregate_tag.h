/* The DWARF tags of the types laid out and named as aggregates: structs, classes and unions. */
#ifndef PROBE_AGGREGATE_TAG_H
#define PROBE_AGGREGATE_TAG_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

/* (uint64_t: .debug_names entries carry tags as ULEB128 values; dwarf_tag's -1 matches none) */
static inline bool is_aggregate_tag(uint64_t tag)
{
    return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

static inline bool probe_is_aggregate_type(Dwarf_Die *die)
{
    return is_aggregate_tag(dwarf_tag(die));
}

#endif
