/* The checks of a unit after its walk: its abbreviation table (abbrev_check.c), checked once per
 * table (units of one object share theirs; a table is a few hundred entries), and where its DIEs
 * end. */
#include "probe_reading.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether root's unit is C (DW_LANG_C89, C, C99, C11, C17). */
static enum abbrev_language unit_language(Dwarf_Die *root)
{
    Dwarf_Attribute attr;
    Dwarf_Word code = 0;
    if (dwarf_attr(root, DW_AT_language, &attr) != NULL)
        dwarf_formudata(&attr, &code);
    if (code == DW_LANG_C89 || code == DW_LANG_C || code == DW_LANG_C99 || code == DW_LANG_C11 ||
        code == 0x002c)
        return ABBREV_C;
    return code == DW_LANG_Go ? ABBREV_GO : ABBREV_OTHER;
}

/* The bytes of the .debug_abbrev section of dwarf (of a .dwo too), as libdw has them:
 * decompressed when the file compresses it. */
static Elf_Data *abbrev_section(Dwarf *dwarf)
{
    static _Thread_local struct {
        Dwarf *dwarf;
        unsigned generation;
        Elf_Data *data;
    } last;
    if (last.dwarf == dwarf && dwarf != NULL && last.generation == probe_read_generation())
        return last.data;
    Elf *elf = dwarf_getelf(dwarf);
    size_t names;
    Elf_Data *data = NULL;
    if (elf != NULL && elf_getshdrstrndx(elf, &names) == 0) {
        Elf_Scn *scn = NULL;
        while (data == NULL && (scn = elf_nextscn(elf, scn)) != NULL) {
            GElf_Shdr header;
            const char *name = probe_section_name(elf, names, scn, &header);
            if (name != NULL && header.sh_type != SHT_NOBITS &&
                (strcmp(name, ".debug_abbrev") == 0 || strcmp(name, ".debug_abbrev.dwo") == 0 ||
                 strcmp(name, ".zdebug_abbrev") == 0))
                data = elf_getdata(scn, NULL);
        }
    }
    last.dwarf = dwarf;
    last.generation = probe_read_generation();
    last.data = data;
    return data;
}

struct header {
    Dwarf_Off abbrev; /* where the unit's abbreviation table starts in .debug_abbrev */
    Dwarf_Off end;    /* where the unit ends in its section */
};

static bool unit_header(Dwarf_Die *root, struct header *out)
{
    return probe_unit_bounds(root, &out->abbrev, &out->end);
}

/* The table of root's unit, unless it is the one checked last (units of an object share one). */
static void check_abbrevs(Dwarf_Die *root, const struct header *h)
{
    static _Thread_local struct {
        Dwarf *dwarf;
        unsigned generation;
        Dwarf_Off offset;
        enum abbrev_language language;
        bool done;
    } last;
    Dwarf *dwarf = dwarf_cu_getdwarf(root->cu);
    enum abbrev_language language = unit_language(root);
    if (last.done && last.dwarf == dwarf && last.offset == h->abbrev && last.language == language &&
        last.generation == probe_read_generation())
        return;
    Elf_Data *data = abbrev_section(dwarf);
    if (data == NULL || data->d_buf == NULL || h->abbrev >= data->d_size) {
        probe_dwarf_errors_note(root, "its unit's abbreviation table lies outside .debug_abbrev");
        return;
    }
    const unsigned char *bytes = data->d_buf;
    char why[160], message[240];
    const char *problem = probe_abbrev_table_problem(bytes + h->abbrev, bytes + data->d_size,
                                                     language, why, sizeof why);
    if (problem != NULL) {
        snprintf(message, sizeof message, "its unit's abbreviation table (at 0x%llx) %s",
                 (unsigned long long)h->abbrev, problem);
        if (problem == why)
            snprintf(message, sizeof message, "in its unit's abbreviation table (at 0x%llx), %s",
                     (unsigned long long)h->abbrev, why);
        probe_dwarf_errors_note(root, message);
        return;
    }
    last.dwarf = dwarf;
    last.generation = probe_read_generation();
    last.offset = h->abbrev;
    last.language = language;
    last.done = true;
}

/* The unit's DIEs end where it does: its top DIE's children are closed by a null entry that is
 * the unit's last byte (a damaged sibling reference or abbreviation makes the walk take an inner
 * list's end for it), and a top DIE without children is followed by nothing. */
static void check_end(Dwarf_Die *root, const struct header *h)
{
    Dwarf_Die child, end;
    int rc = dwarf_child(root, &child);
    if (rc > 0) { /* the top DIE alone: its attributes (and an empty list) end the unit */
        const unsigned char *after = probe_die_attributes_end(root);
        Dwarf_Off at =
            after ? dwarf_dieoffset(root) + (Dwarf_Off)(after - (const unsigned char *)root->addr)
                  : 0;
        if (after == NULL || at + (dwarf_haschildren(root) ? 1 : 0) != h->end)
            probe_dwarf_errors_note(root,
                                    "its unit goes on past its top DIE, which has no children");
        return;
    }
    if (rc != 0 || !probe_dwarf_errors_top_end(root->cu, &end))
        return; /* the walk failed, or it was not made with the checked calls */
    Dwarf_Off at = dwarf_dieoffset(&end);
    if (at + 1 != h->end) {
        char why[128];
        snprintf(why, sizeof why, "its unit's DIEs end at 0x%llx, not where the unit does (0x%llx)",
                 (unsigned long long)at + 1, (unsigned long long)h->end);
        probe_dwarf_errors_note(root, why);
    }
}

void probe_unit_check(Dwarf_Die *root)
{
    struct header h;
    if (probe_dwarf_errors_first() != NULL)
        return;
    if (!unit_header(root, &h)) {
        probe_dwarf_errors_note(root, "its unit's header cannot be read");
        return;
    }
    check_abbrevs(root, &h);
    check_end(root, &h);
}
