/* Reading a .gdb_index section (gdb-add-index, lld and gold --gdb-index; format documented in
 * the gdb manual, "Index Section Format"): which compilation units define a type name. libdw
 * has no reader for it, hence this one. */
#ifndef PROBE_GDB_INDEX_H
#define PROBE_GDB_INDEX_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
