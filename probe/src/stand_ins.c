/* An index from the type-unit types that compile units refer to, by their DIE's address, to
 * the first stand-in met: one walk of every DIE of every compile unit (stand-ins are also in
 * function bodies), made only when a type unit leaves a type unnamed. libdw's plain calls: a
 * look-up beside the walk (dwarf_errors.h). */
#include "stand_ins.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "die_table.h"

struct stand_in {
    const void *type; /* the type unit's DIE */
    Dwarf_Die die;
};

static _Thread_local struct {
    Dwarf *dw;
    struct die_table table; /* of struct stand_in */
    bool failed;
} index_of;

void stand_ins_reset(void)
{
    die_table_free(&index_of.table);
    memset(&index_of, 0, sizeof index_of);
}

static void note(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Die type;
    if (dwarf_attr(die, DW_AT_signature, &attr) == NULL || dwarf_formref_die(&attr, &type) == NULL)
        return;
    if (!die_table_room(&index_of.table, sizeof(struct stand_in))) {
        index_of.failed = true;
        return;
    }
    struct stand_in *slot = die_table_slot(&index_of.table, type.addr);
    if (slot->type == NULL) {
        *slot = (struct stand_in){type.addr, *die};
        index_of.table.count++;
    }
}

static void gather(Dwarf_Die *die, int depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(die, &child) != 0)
        return;
    do {
        if (dwarf_hasattr(&child, DW_AT_signature))
            note(&child);
        if (dwarf_haschildren(&child))
            gather(&child, depth + 1);
    } while (!index_of.failed && dwarf_siblingof(&child, &child) == 0);
}

static void build(Dwarf *dw)
{
    stand_ins_reset();
    index_of.dw = dw;
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t unit_type;
    Dwarf_Die cudie, subdie;
    while (!index_of.failed &&
           dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
        if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
            continue;
        gather(unit_type == DW_UT_skeleton && dwarf_tag(&subdie) != DW_TAG_invalid ? &subdie
                                                                                   : &cudie,
               0);
    }
}

bool stand_in_of(Dwarf_Die *type, Dwarf_Die *out)
{
    Dwarf *dw = dwarf_cu_getdwarf(type->cu);
    if (dw == NULL)
        return false;
    if (index_of.dw != dw)
        build(dw);
    if (index_of.table.capacity == 0)
        return false;
    const struct stand_in *slot = die_table_slot(&index_of.table, type->addr);
    if (slot->type == NULL)
        return false;
    *out = slot->die;
    return true;
}
