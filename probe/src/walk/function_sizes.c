/* Function code sizes from the ELF symbol table (libdwfl) and inline counts from DWARF: every
 * DW_TAG_inlined_subroutine is one place a function was inlined. One pass over each. */
#include "probe/functions.h"

#include "common/grow_array.h"
#include "probe_walk.h"

#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool wanted(const char *name, const char *const *patterns, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (layout_name_matches(patterns[i], name))
            return true;
    return false;
}

/* The entry for name, added when new (linear: a pattern selects a handful of functions). */
static struct function_info *entry(struct function_set *set, const char *name)
{
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(set->items[i].name, name) == 0)
            return &set->items[i];
    struct function_info *f = array_push(&set->items, &set->count, &set->capacity, sizeof *f);
    if (f == NULL)
        return NULL;
    if ((f->name = strdup(name)) == NULL) {
        set->count--; /* a nameless entry would break the next lookup */
        return NULL;
    }
    return f;
}

/* "rxq_grow_push.constprop.0" and "conn_received.cold" are parts of rxq_grow_push and
 * conn_received; versions ("malloc@@GLIBC_2.2.5") are dropped too. */
static void base_name(const char *symbol, char *out, size_t size)
{
    size_t n = strcspn(symbol, ".@");
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), symbol);
}

static void read_symbols(Dwfl_Module *module, const char *const *patterns, size_t n,
                         struct function_set *set)
{
    int count = dwfl_module_getsymtab(module);
    for (int i = 1; i < count; i++) {
        GElf_Sym sym;
        GElf_Addr address;
        const char *name = dwfl_module_getsym_info(module, i, &sym, &address, NULL, NULL, NULL);
        if (name == NULL || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
            continue;
        char base[512];
        base_name(name, base, sizeof base);
        if (!wanted(base, patterns, n))
            continue;
        struct function_info *f = entry(set, base);
        if (f != NULL) {
            f->code_size += sym.st_size;
            f->symbols++;
        }
    }
}

static void count_inlined(Dwarf_Die *die, const char *const *patterns, size_t n,
                          struct function_set *set)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return;
    do {
        if (dwarf_tag(&child) == DW_TAG_inlined_subroutine) {
            const char *name = dwarf_diename(&child); /* follows DW_AT_abstract_origin */
            struct function_info *f = name && wanted(name, patterns, n) ? entry(set, name) : NULL;
            if (f != NULL)
                f->inlined++;
        }
        if (dwarf_haschildren(&child))
            count_inlined(&child, patterns, n, set);
    } while (dwarf_siblingof(&child, &child) == 0);
}

static void read_inlines(Dwarf *dw, const char *const *patterns, size_t n, struct function_set *set)
{
    Dwarf_CU *cu = NULL;
    Dwarf_Die cudie, subdie;
    uint8_t unit_type;
    while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, &subdie) == 0) {
        /* A skeleton unit's code lives in its split unit (-gsplit-dwarf). */
        Dwarf_Die *unit =
            unit_type == DW_UT_skeleton && dwarf_tag(&subdie) != DW_TAG_invalid ? &subdie : &cudie;
        count_inlined(unit, patterns, n, set);
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct function_info *)a)->name, ((const struct function_info *)b)->name);
}

enum layout_status functions_read(const char *path, const char *debug_file,
                                  const char *const *patterns, size_t pattern_count,
                                  struct function_set *out, bool *has_dwarf, char *error,
                                  size_t error_size)
{
    memset(out, 0, sizeof *out);
    out->binary = strdup(path);
    *has_dwarf = false;
    Dwfl *dwfl;
    Dwfl_Module *module = probe_check_file(path, error, error_size)
                              ? probe_report_offline(path, &dwfl, error, error_size)
                              : NULL;
    if (module == NULL)
        return LAYOUT_INPUT_ERROR;
    read_symbols(module, patterns, pattern_count, out);
    int fd = debug_file ? open(debug_file, O_RDONLY | O_CLOEXEC) : -1;
    Dwarf_Addr bias;
    Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : dwfl_module_getdwarf(module, &bias);
    if (dw != NULL) {
        *has_dwarf = true;
        read_inlines(dw, patterns, pattern_count, out);
    }
    if (fd >= 0) {
        if (dw != NULL)
            dwarf_end(dw);
        close(fd);
    }
    dwfl_end(dwfl);
    if (out->count > 1)
        qsort(out->items, out->count, sizeof *out->items, by_name);
    return LAYOUT_OK;
}

bool functions_code_size(const struct function_set *set, const char *pattern, uint64_t *size)
{
    bool found = false;
    *size = 0;
    for (size_t i = 0; i < set->count; i++)
        if (layout_name_matches(pattern, set->items[i].name)) {
            *size += set->items[i].code_size;
            found = true;
        }
    return found;
}

void functions_print_text(FILE *out, const struct function_set *set)
{
    fprintf(out, "%-40s %10s %8s %10s\n", "function", "code size", "symbols", "inlined at");
    for (size_t i = 0; i < set->count; i++) {
        const struct function_info *f = &set->items[i];
        fprintf(out, "%-40s %10" PRIu64 " %8zu %10zu\n", f->name, f->code_size, f->symbols,
                f->inlined);
    }
}

void functions_print_markdown(FILE *out, const struct function_set *set)
{
    fprintf(out,
            "| function | code size (B) | symbols | inlined at |\n| --- | --- | --- | --- |\n");
    for (size_t i = 0; i < set->count; i++) {
        const struct function_info *f = &set->items[i];
        fprintf(out, "| `%s` | %" PRIu64 " | %zu | %zu |\n", f->name, f->code_size, f->symbols,
                f->inlined);
    }
}

json_t *functions_json(const struct function_set *set)
{
    json_t *list = json_array();
    for (size_t i = 0; i < set->count; i++) {
        const struct function_info *f = &set->items[i];
        json_array_append_new(list,
                              json_pack("{s:s, s:I, s:I, s:I}", "name", f->name, "code_size",
                                        (json_int_t)f->code_size, "symbols", (json_int_t)f->symbols,
                                        "inlined", (json_int_t)f->inlined));
    }
    return list;
}

void functions_free(struct function_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        free(set->items[i].name);
    free(set->items);
    free(set->binary);
    memset(set, 0, sizeof *set);
}
