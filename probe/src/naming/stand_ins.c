/* Two indexes made by one walk of every DIE of every compile unit (stand-ins and local classes
 * are in function bodies), only when a type unit leaves a type unnamed: the type-unit types the
 * compile units refer to, by their DIE's address, to the first stand-in met; and the classes
 * local to functions by their line and column. libdw's plain calls: a look-up beside the walk
 * (dwarf_errors.c). */
#include "probe_naming.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct stand_in {
    const void *type; /* the type unit's DIE */
    Dwarf_Die die;
};

static _Thread_local struct {
    Dwarf *dw;
    struct die_table table;   /* of struct stand_in */
    struct keyed_dies locals; /* by place: line << 24 | column */
    bool failed;
} index_of;

void probe_stand_ins_reset(void)
{
    probe_die_table_free(&index_of.table);
    probe_keyed_dies_free(&index_of.locals);
    memset(&index_of, 0, sizeof index_of);
}

static uint64_t place_of(Dwarf_Die *die)
{
    int line = 0, column = 0;
    if (dwarf_decl_line(die, &line) != 0 || line <= 0)
        return 0;
    dwarf_decl_column(die, &column);
    return (uint64_t)line << 24 | (uint64_t)(column & 0xffffff);
}

static void note_local(Dwarf_Die *die)
{
    uint64_t place = place_of(die);
    if (place != 0 && !dwarf_hasattr(die, DW_AT_declaration) &&
        !probe_keyed_dies_add(&index_of.locals, place, die))
        index_of.failed = true;
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

/* (in_function: below a function definition, where local classes are) */
static void gather(Dwarf_Die *die, int depth, bool in_function)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(die, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (dwarf_hasattr(&child, DW_AT_signature))
            note(&child);
        else if (in_function && is_aggregate_tag(tag))
            note_local(&child);
        if (dwarf_haschildren(&child))
            gather(&child, depth + 1,
                   in_function ||
                       (tag == DW_TAG_subprogram && !dwarf_hasattr(&child, DW_AT_declaration)));
    } while (!index_of.failed && dwarf_siblingof(&child, &child) == 0);
}

static bool gather_unit(Dwarf_Die *root, void *arg)
{
    (void)arg;
    gather(root, 0, false);
    return !index_of.failed;
}

static void build(Dwarf *dw)
{
    probe_stand_ins_reset();
    index_of.dw = dw;
    probe_each_compile_unit(dw, gather_unit, NULL);
    probe_keyed_dies_sort(&index_of.locals);
}

static bool built_for(Dwarf_Die *die)
{
    Dwarf *dw = dwarf_cu_getdwarf(die->cu);
    if (dw == NULL)
        return false;
    if (index_of.dw != dw)
        build(dw);
    return true;
}

static bool same_name(Dwarf_Die *a, Dwarf_Die *b)
{
    const char *x = dwarf_diename(a), *y = dwarf_diename(b);
    return x == y || (x != NULL && y != NULL && strcmp(x, y) == 0);
}

bool probe_original_of_copy(Dwarf_Die *copy, Dwarf_Die *out)
{
    uint64_t place = place_of(copy);
    Dwarf_Word size = 0, other_size;
    Dwarf_Attribute attr;
    if (place == 0 || !built_for(copy))
        return false;
    if (dwarf_attr(copy, DW_AT_byte_size, &attr) != NULL)
        dwarf_formudata(&attr, &size);
    const struct keyed_dies *k = &index_of.locals;
    size_t found = 0;
    for (size_t i = probe_keyed_dies_first(k, place); i < k->count && k->items[i].key == place;
         i++) {
        Dwarf_Die c = k->items[i].die;
        other_size = 0;
        if (dwarf_attr(&c, DW_AT_byte_size, &attr) != NULL)
            dwarf_formudata(&attr, &other_size);
        if (other_size != size || !same_name(&c, copy) || dwarf_tag(&c) != dwarf_tag(copy))
            continue;
        if (found++ == 0)
            *out = c;
    }
    return found == 1;
}

bool probe_stand_in_of(Dwarf_Die *type, Dwarf_Die *out)
{
    if (!built_for(type) || index_of.table.capacity == 0)
        return false;
    const struct stand_in *slot = die_table_slot(&index_of.table, type->addr);
    if (slot->type == NULL)
        return false;
    *out = slot->die;
    return true;
}
