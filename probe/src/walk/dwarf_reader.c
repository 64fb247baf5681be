/* Reads struct/class/union layouts from DWARF with libdw. libdwfl opens the file and finds a
 * separate debug file (by build id under /usr/lib/debug/.build-id or by .gnu_debuglink);
 * dwarf_get_units walks every unit: compile units, DWARF 5 type units, and the split units of
 * skeletons (-gsplit-dwarf). Each unit is walked once. Here: the walk, the choice of units by
 * index, and the entry points; probe_measuring.h names the parts that measure types and read
 * members. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe/layout.h"
#include "probe/type_match.h"
#include "probe_walk.h"

/* What the --type names ask for, checked before a type is named or read: the identifier each
 * name ends in ("Box" of "ns::Box<int>", "L" of "f(int)::L"), or none (a glob there: any). */
struct wanted {
    char **bases;
    size_t count;
    bool any;
};

/* How a read goes, set by the entry point (layout_read, layout_read_first, layout_read_located)
 * and passed down the read, never kept in the file. */
struct read_settings {
    const struct layout_options *options; /* may be NULL */
    bool stop_at_first; /* layout_read_first: stop once every name has a definition */
    bool decl_files;    /* layout_read_located: also read where each type is defined, which
                           needs the line tables the lean open leaves out (so that plain dumps
                           of -gz files stay fast) */
};

struct walk {
    struct layout_set *set;
    const struct layout_options *options; /* the names wanted: their typedefs are noted */
    bool decl_files;
    struct wanted wanted;
    bool expand;
    struct seen seen;
    struct align_cache aligns;
    bool failed;
};

/* DW_AT_decl_file (joined to the unit's DW_AT_comp_dir when relative) and DW_AT_decl_line of a
 * definition into t; false when out of memory. */
static bool read_decl(Dwarf_Die *die, struct layout_type *t)
{
    int line;
    Dwarf_Die cu;
    Dwarf_Attribute attr;
    const char *file = dwarf_decl_file(die), *comp_dir = NULL;
    if (file != NULL && dwarf_diecu(die, &cu, NULL, NULL) != NULL)
        comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
    if (file != NULL && (t->decl_file = probe_decl_path(file, comp_dir)) == NULL)
        return false;
    t->decl_line = dwarf_decl_line(die, &line) == 0 && line > 0 ? (unsigned)line : 0;
    return true;
}

/* Reads one definition, unless a light read shows it is one already kept. */
static void read_definition(struct walk *w, Dwarf_Die *die, const struct scope_name *named)
{
    struct layout_type t;
    char *name = strdup(named->name); /* the names' cache may drop it while types are read */
    if (name == NULL || !probe_read_aggregate(&w->aligns, die, name, w->expand, true, &t)) {
        free(name);
        w->failed = true;
        return;
    }
    bool known = probe_already_kept(w->set, &w->seen, &t);
    probe_free_type(&t);
    if (!known) {
        bool read = probe_read_aggregate(&w->aligns, die, name, w->expand, false, &t);
        t.unit_local = named->unit_local;
        if (!read || (w->decl_files && !read_decl(die, &t)) || !probe_keep(w->set, &w->seen, &t))
            w->failed = true;
    }
    free(name);
}

static bool add_alias(struct layout_set *set, const char *name, const char *target)
{
    struct layout_alias *grown = realloc(set->aliases, (set->alias_count + 1) * sizeof *grown);
    if (grown == NULL)
        return false;
    set->aliases = grown;
    struct layout_alias a = {strdup(name), strdup(target)};
    if (a.name == NULL || a.target == NULL) {
        free(a.name);
        free(a.target);
        return false;
    }
    set->aliases[set->alias_count++] = a;
    return true;
}

/* A C++ typedef (or using alias) that a wanted name names: noted with the class it stands for,
 * so that --type std::string finds std::__cxx11::basic_string<char, ...>. Only a typedef whose
 * own name is a wanted name's last component is named (the rest cost nothing). */
static void note_alias(struct walk *w, Dwarf_Die *die)
{
    const char *own = dwarf_diename(die);
    const struct layout_options *o = w->options;
    for (size_t i = 0; own != NULL && o != NULL && i < o->name_count; i++) {
        struct scope_name alias, target_name;
        Dwarf_Die target;
        if (strcmp(probe_cxx_last_component(o->names[i]), own) != 0)
            continue;
        if (!probe_scope_name_of(die, &alias) || alias.name == NULL ||
            !layout_type_name_matches(o->names[i], alias.name) ||
            dwarf_peel_type(die, &target) != 0 ||
            !probe_is_aggregate_type(probe_resolve_signature(&target)) ||
            !probe_scope_name_of(&target, &target_name))
            continue;
        if (target_name.name != NULL && !add_alias(w->set, alias.name, target_name.name))
            w->failed = true;
        return;
    }
}

/* The identifier a name's last component starts with: "Box" of "ns::Box<int>", "" of
 * "f()::{lambda()#1}". Into a new string; NULL out of memory. */
static char *base_of(const char *name)
{
    const char *last = probe_cxx_last_component(name);
    return strndup(last, strcspn(last, "<({ "));
}

/* Every name canonical, its base noted; false out of memory. */
static bool wanted_from(const struct layout_options *o, struct wanted *w)
{
    memset(w, 0, sizeof *w);
    w->any = o == NULL || o->name_count == 0;
    if (w->any)
        return true;
    w->bases = calloc(o->name_count, sizeof *w->bases);
    if (w->bases == NULL)
        return false;
    for (size_t i = 0; i < o->name_count; i++) {
        char *canonical = probe_cxx_canonical(o->names[i]);
        char *base = canonical ? base_of(canonical) : NULL;
        free(canonical);
        if (base == NULL)
            return false;
        w->any |= base[0] == '\0' || strpbrk(base, "*?[") != NULL;
        w->bases[w->count++] = base;
    }
    return true;
}

static void wanted_free(struct wanted *w)
{
    for (size_t i = 0; i < w->count; i++)
        free(w->bases[i]);
    free(w->bases);
}

/* Whether a DIE of this own name may be wanted (without a name, it may: a lambda, an anonymous
 * class named for linkage). Checked before it is named, which costs more than its comparison. */
static bool may_be_wanted(const struct wanted *w, Dwarf_Die *die)
{
    const char *own = w->any ? NULL : dwarf_diename(die);
    if (own == NULL)
        return true;
    size_t n = strcspn(own, "<");
    for (size_t i = 0; i < w->count; i++)
        if (strlen(w->bases[i]) == n && strncmp(w->bases[i], own, n) == 0)
            return true;
    return false;
}

/* Whether a named type is wanted: by one of the names, or by a typedef noted so far. */
static bool wanted_by_name(const struct walk *w, const char *name)
{
    const struct layout_options *o = w->options;
    if (o == NULL || o->name_count == 0)
        return true;
    for (size_t i = 0; i < o->name_count; i++)
        if (layout_type_name_matches(o->names[i], name))
            return true;
    for (size_t i = 0; i < w->set->alias_count; i++)
        if (strcmp(w->set->aliases[i].target, name) == 0)
            return true;
    return false;
}

/* A struct, class or union definition of the unit, or a typedef: the definition is read under
 * its qualified name (scope_names.c), an unnamed one under the name a typedef gives it
 * (`typedef struct {...} anon_t;`, as pahole and gdb name it). */
static void visit_type(struct walk *w, Dwarf_Die *die)
{
    struct scope_name named, own;
    Dwarf_Attribute attr;
    Dwarf_Die target;
    if (probe_is_aggregate_type(die)) {
        /* A declaration, or a stand-in for a type unit's definition (read in that unit). */
        if (dwarf_hasattr(die, DW_AT_declaration) || dwarf_hasattr(die, DW_AT_signature) ||
            !may_be_wanted(&w->wanted, die))
            return;
        if (!probe_scope_name_of(die, &named))
            w->failed = true;
        else if (named.name != NULL && wanted_by_name(w, named.name))
            read_definition(w, die, &named);
        return;
    }
    note_alias(w, die);
    /* (clang puts the anonymous struct in a type unit of its own, and its typedef in the CU) */
    if (!may_be_wanted(&w->wanted, die) || dwarf_attr(die, DW_AT_type, &attr) == NULL ||
        probe_checked_formref_die(&attr, &target) == NULL ||
        !probe_is_aggregate_type(probe_resolve_signature(&target)) ||
        dwarf_hasattr(&target, DW_AT_declaration) || dwarf_hasattr(&target, DW_AT_name))
        return;
    if (!probe_scope_name_of(&target, &own) ||
        (own.name == NULL && !probe_scope_name_of(die, &named)))
        w->failed = true;
    else if (own.name == NULL && named.name != NULL && wanted_by_name(w, named.name))
        read_definition(w, &target, &named);
}

/* Reads the types a unit defines: at its top, in namespaces, in classes, in C++ functions. */
static void walk_unit(struct walk *w, Dwarf_Die *root)
{
    const Dwarf_Die *types;
    size_t count;
    if (!probe_scope_unit_types(root, &types, &count)) {
        w->failed = true;
        return;
    }
    for (size_t i = 0; i < count && !w->failed; i++) {
        Dwarf_Die die = types[i];
        visit_type(w, &die);
    }
}

/* Unit header offsets -> the offsets of the units' top DIEs; false when a header is unreadable. */
static bool top_dies(Dwarf *dw, uint64_t *offsets, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        Dwarf_Off next;
        size_t header;
        if (dwarf_next_unit(dw, offsets[i], &next, &header, NULL, NULL, NULL, NULL, NULL, NULL) !=
            0)
            return false;
        offsets[i] += header;
    }
    return true;
}

/* The CU DIE offsets .debug_names or .gdb_index names for every wanted name (and which index
 * in *index_name), or 0 (read every unit) when there is no index, a name is a glob or missing
 * from it, or .gdb_index points into type units. */
static size_t units_from_index(Dwarf *dw, const struct layout_options *o, uint64_t *dies,
                               size_t max, const char **index_name)
{
    size_t named = o ? probe_debug_names_units(dw, o->names, o->name_count, dies, max) : 0;
    if (named > 0 && top_dies(dw, dies, named)) {
        *index_name = " (chosen by .debug_names)";
        return named;
    }
    *index_name = " (chosen by .gdb_index)";
    struct gdb_index index;
    if (o == NULL || o->name_count == 0 || !probe_gdb_index_open(dw, &index))
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < o->name_count; i++) {
        if (strpbrk(o->names[i], "*?[") != NULL || n >= max)
            return 0;
        int found = probe_gdb_index_type_units(&index, o->names[i], dies + n, (int)(max - n));
        if (found <= 0)
            return 0;
        n += (size_t)found;
    }
    return top_dies(dw, dies, n) ? n : 0;
}

static bool among(uint64_t value, const uint64_t *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (values[i] == value)
            return true;
    return false;
}

/* Every wanted name (or glob) names a type read so far, as the command line matches them. */
static bool all_matched(const struct layout_set *set, const struct layout_options *o)
{
    for (size_t n = 0; n < o->name_count; n++) {
        bool found = false;
        for (size_t i = 0; i < set->count && !found; i++)
            found = layout_type_matches(set, &set->types[i], o->names[n]);
        if (!found)
            return false;
    }
    return true;
}

static enum layout_status read_units(Dwarf *dw, const struct read_settings *settings,
                                     bool use_index, struct layout_set *out, char *error,
                                     size_t size);

/* Reads again, every unit, for the names given (the set read so far is dropped): the index
 * named a unit that does not define the struct itself (a typedef of that name, or a
 * declaration), or a typedef named a type that was passed before the typedef was met. */
static enum layout_status read_again_fully(Dwarf *dw, const struct read_settings *settings,
                                           struct layout_set *out, char *error, size_t size)
{
    char *binary = out->binary;
    out->binary = NULL;
    layout_free(out);
    out->binary = binary;
    return read_units(dw, settings, false, out, error, size);
}

/* A typedef a name matched names a type not read (met before the typedef): read again with the
 * types the typedefs name among the names. */
static enum layout_status read_alias_targets(Dwarf *dw, const struct read_settings *settings,
                                             struct layout_set *out, char *error, size_t size)
{
    const struct layout_options *options = settings->options;
    size_t n = options->name_count + out->alias_count;
    const char **names = malloc(n * sizeof *names);
    char **targets = calloc(out->alias_count + 1, sizeof *targets);
    bool ok = names != NULL && targets != NULL;
    for (size_t i = 0; ok && i < out->alias_count; i++)
        ok = (targets[i] = strdup(out->aliases[i].target)) != NULL;
    enum layout_status status = LAYOUT_INPUT_ERROR;
    if (ok) {
        memcpy(names, options->names, options->name_count * sizeof *names);
        memcpy(names + options->name_count, targets, out->alias_count * sizeof *names);
        struct layout_options more = *options;
        more.names = names;
        more.name_count = n;
        struct read_settings again = *settings;
        again.options = &more;
        status = read_again_fully(dw, &again, out, error, size);
    } else {
        probe_fail(error, size, "%s: cannot read its DWARF: out of memory", out->binary);
    }
    for (size_t i = 0; targets != NULL && targets[i] != NULL; i++)
        free(targets[i]);
    free(targets);
    free(names);
    return status;
}

/* Whether every type a noted typedef names was read. */
static bool alias_targets_read(const struct layout_set *set)
{
    for (size_t a = 0; a < set->alias_count; a++) {
        bool found = false;
        for (size_t i = 0; i < set->count && !found; i++)
            found = strcmp(set->types[i].name, set->aliases[a].target) == 0;
        if (!found)
            return false;
    }
    return true;
}

static enum layout_status read_units(Dwarf *dw, const struct read_settings *settings,
                                     bool use_index, struct layout_set *out, char *error,
                                     size_t size)
{
    const struct layout_options *options = settings->options;
    bool expand = options && options->expand;
    uint64_t chosen[64];
    const char *index_name;
    size_t chosen_count = use_index ? units_from_index(dw, options, chosen, 64, &index_name) : 0;
    out->index_used = chosen_count > 0 ? index_name : NULL;
    struct walk w = {
        .set = out, .options = options, .decl_files = settings->decl_files, .expand = expand};
    if (!wanted_from(options, &w.wanted))
        w.failed = true;
    /* (NULL when out of memory: declarations stay unsized) */
    struct type_defs *definitions = probe_type_defs_new(dw);
    struct library_defs *libraries = probe_library_defs_new(out->binary);
    probe_measure_use_definitions(definitions, libraries);
    probe_dwarf_errors_reset();
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t unit_type;
    Dwarf_Die cudie, subdie;
    size_t units = 0;
    int rc;
    while ((rc = dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie)) == 0) {
        units++;
        if (out->index_used != NULL && !among(dwarf_dieoffset(&cudie), chosen, chosen_count))
            continue;
        out->units_read++;
        /* A skeleton's types are in its split unit (the .dwo); a type unit's under its DIE. */
        Dwarf_Die *root =
            unit_type == DW_UT_skeleton && dwarf_tag(&subdie) != DW_TAG_invalid ? &subdie : &cudie;
        if (unit_type == DW_UT_skeleton && root == &cudie) { /* its types are in a .dwo */
            probe_dwarf_errors_missing_dwo(&cudie);
            break;
        }
        walk_unit(&w, root);
        probe_unit_check(root); /* a damaged unit can end the walk early: read to its end? */
        if (w.failed)
            break;
        /* --first: the rest go unread, even uncounted (each unit header is a page to map). */
        if (settings->stop_at_first && options && options->name_count > 0 &&
            all_matched(out, options))
            break;
    }
    free(w.seen.slots);
    wanted_free(&w.wanted);
    probe_die_table_free(&w.aligns.slots);
    probe_cxx_cache_free(w.aligns.cxx);
    probe_measure_use_definitions(NULL, NULL);
    probe_type_defs_free(definitions);
    probe_scope_names_reset();
    probe_library_defs_free(libraries);
    if (!probe_layout_checked(out, error, size))
        return LAYOUT_INPUT_ERROR;
    if (rc < 0 || w.failed) {
        probe_fail(error, size, "%s: cannot read its DWARF: %s", out->binary,
                   w.failed ? "out of memory" : dwarf_errmsg(-1));
        return LAYOUT_INPUT_ERROR;
    }
    out->units_total = units;
    if (units == 0) {
        probe_fail(error, size, "%s has no DWARF units", out->binary);
        return LAYOUT_INPUT_ERROR;
    }
    if (out->index_used != NULL && !all_matched(out, options))
        return read_again_fully(dw, settings, out, error, size);
    if (use_index && !alias_targets_read(out))
        return read_alias_targets(dw, settings, out, error, size);
    return LAYOUT_OK;
}

static enum layout_status read_path(const char *path, const struct read_settings *settings,
                                    struct layout_set *out, char *error, size_t error_size)
{
    const struct layout_options *options = settings->options;
    const char *debug_file = options ? options->debug_file : NULL;
    memset(out, 0, sizeof *out);
    out->binary = strdup(path);
    if (!probe_check_file(path, error, error_size))
        return LAYOUT_INPUT_ERROR;
    if (debug_file != NULL) {
        if (!probe_check_file(debug_file, error, error_size)) /* a cut file: say so */
            return LAYOUT_INPUT_ERROR;
        int fd = open(debug_file, O_RDONLY | O_CLOEXEC);
        Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
        if (dw == NULL) {
            probe_fail(error, error_size, "%s: no DWARF in this debug file (%s)", debug_file,
                       fd < 0 ? strerror(errno) : dwarf_errmsg(-1));
            if (fd >= 0)
                close(fd);
            return LAYOUT_INPUT_ERROR;
        }
        enum layout_status status = read_units(dw, settings, true, out, error, error_size);
        dwarf_end(dw);
        close(fd);
        return status;
    }
    struct lean_dwarf lean;
    if (!settings->decl_files && probe_lean_dwarf_open(path, &lean)) {
        enum layout_status status = read_units(lean.dwarf, settings, true, out, error, error_size);
        probe_lean_dwarf_close(&lean);
        return status;
    }
    Dwfl *dwfl;
    Dwfl_Module *mod = probe_report_offline(path, &dwfl, error, error_size);
    if (mod == NULL)
        return LAYOUT_INPUT_ERROR;
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
    if (dw == NULL) {
        probe_fail(
            error, error_size,
            "%s has no DWARF debug info: rebuild it with -g, install its -dbgsym package, or "
            "pass --debug-file FILE",
            path);
        dwfl_end(dwfl);
        return LAYOUT_INPUT_ERROR;
    }
    enum layout_status status = read_units(dw, settings, true, out, error, error_size);
    dwfl_end(dwfl);
    return status;
}

static enum layout_status read_with(const char *path, const struct read_settings *settings,
                                    struct layout_set *out, char *error, size_t error_size)
{
    enum layout_status status = read_path(path, settings, out, error, error_size);
    if (status != LAYOUT_OK)
        probe_one_line(error); /* names from a damaged file may hold any byte */
    return status;
}

enum layout_status layout_read(const char *path, const struct layout_options *options,
                               struct layout_set *out, char *error, size_t error_size)
{
    struct read_settings settings = {.options = options};
    return read_with(path, &settings, out, error, error_size);
}

enum layout_status layout_read_first(const char *path, const struct layout_options *options,
                                     struct layout_set *out, char *error, size_t error_size)
{
    struct read_settings settings = {.options = options, .stop_at_first = true};
    return read_with(path, &settings, out, error, error_size);
}

void layout_free(struct layout_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        probe_free_type(&set->types[i]);
    for (size_t i = 0; i < set->alias_count; i++) {
        free(set->aliases[i].name);
        free(set->aliases[i].target);
    }
    free(set->aliases);
    free(set->types);
    free(set->binary);
    memset(set, 0, sizeof *set);
}

enum layout_status layout_read_located(const char *path, const struct layout_options *options,
                                       struct layout_set *out, char *error, size_t error_size)
{
    struct read_settings settings = {.options = options, .decl_files = true};
    return read_with(path, &settings, out, error, error_size);
}
