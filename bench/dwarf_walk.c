/* The floor for `qaudit layout`: open a binary as the layout reader does (libdwfl, separate debug
 * files found the same way) and visit every DIE of every unit once, reading its tag and name and
 * nothing else. Prints the number of DIEs. usage: dwarf_walk BINARY */
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <stdio.h>

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static unsigned long walk(Dwarf_Die *die)
{
    unsigned long n = 0;
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return 0;
    do {
        /* Read what every reader reads first; the volatile keeps the reads. */
        volatile int tag = dwarf_tag(&child);
        volatile const char *name = dwarf_diename(&child);
        (void)tag, (void)name;
        n++;
        if (dwarf_haschildren(&child))
            n += walk(&child);
    } while (dwarf_siblingof(&child, &child) == 0);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dwarf_walk BINARY\n");
        return 2;
    }
    Dwfl *dwfl = dwfl_begin(&callbacks);
    Dwfl_Module *module = dwfl ? dwfl_report_offline(dwfl, "", argv[1], -1) : NULL;
    Dwarf_Addr bias;
    Dwarf *dw = module ? dwfl_module_getdwarf(module, &bias) : NULL;
    if (dw == NULL) {
        fprintf(stderr, "dwarf_walk: %s: no DWARF\n", argv[1]);
        return 2;
    }
    unsigned long dies = 0;
    Dwarf_CU *cu = NULL;
    Dwarf_Die cudie, subdie;
    uint8_t unit_type;
    while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, &subdie) == 0)
        dies += 1 + walk(unit_type == DW_UT_skeleton ? &subdie : &cudie);
    printf("%lu\n", dies);
    dwfl_end(dwfl);
    return 0;
}
