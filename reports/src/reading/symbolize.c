/* Symbolization with libdwfl: each module's file is opened once (its own Dwfl, at bias 0, since
 * frames are already module-relative), and each distinct frame is looked up once. Inlined calls
 * become extra locations from DW_TAG_inlined_subroutine scopes, as eu-addr2line -i does. */
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow_array.h"
#include "reports_reading.h"

/* The main program's debug file given with --debug-file, while its module is being opened. */
static const char *explicit_debug_file;

/* libdwfl's own search (build id under /usr/lib/debug/.build-id, .gnu_debuglink beside the file
 * or under /usr/lib/debug), unless a debug file was given for the module being opened. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file,
                          GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    if (explicit_debug_file != NULL) {
        int fd = open(explicit_debug_file, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            *debuginfo_file_name = strdup(explicit_debug_file);
            return fd;
        }
    }
    return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                        debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

struct opened {
    Dwfl *dwfl;
    Dwfl_Module *module;
    bool tried; /* opened on the first frame that needs it: unused modules say nothing */
};

/* A distinct (module, offset) and what it resolved to. */
struct cached_frame {
    uint32_t module;
    uint64_t offset;
    struct report_location *locations;
    size_t location_count, location_capacity;
    bool used;
};

struct cache {
    struct cached_frame *slots;
    size_t capacity, used;
};

static void hex_build_id(Dwfl_Module *module, char *out, size_t size)
{
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(module, &bits, &vaddr);
    out[0] = '\0';
    for (int i = 0; i < n && (size_t)(2 * i + 2) < size; i++)
        snprintf(out + 2 * i, 3, "%02x", bits[i]);
}

static struct opened open_module(struct report_module *m, FILE *warn)
{
    struct opened o = {dwfl_begin(&offline_callbacks), NULL, true};
    if (o.dwfl == NULL)
        return o;
    if (m->path[0] != '/') { /* linux-vdso.so.1 and the like: no file to read, nothing to say */
        m->missing = true;
        return o;
    }
    struct stat st;
    if (stat(m->file, &st) != 0 || !S_ISREG(st.st_mode)) { /* a FIFO or device would block */
        m->missing = true;
        fprintf(warn,
                "qaudit report: warning: %s is not a regular file; its frames stay as "
                "addresses\n",
                m->file);
        return o;
    }
    dwfl_report_begin(o.dwfl);
    o.module = dwfl_report_elf(o.dwfl, m->path, m->file, -1, 0, false);
    dwfl_report_end(o.dwfl, NULL, NULL);
    if (o.module == NULL) {
        m->missing = true;
        fprintf(warn, "qaudit report: warning: cannot read %s (%s); its frames stay as addresses\n",
                m->file, dwfl_errmsg(-1));
        return o;
    }
    char build_id[129];
    hex_build_id(o.module, build_id, sizeof build_id);
    if (m->build_id[0] && strcmp(build_id, m->build_id) != 0) {
        m->mismatched = true;
        fprintf(warn,
                "qaudit report: warning: %s has build id %s, the dump's %s has %s: frames in %s "
                "are marked '?' and cannot be trusted\n",
                m->file, build_id[0] ? build_id : "(none)", m->path, m->build_id, m->path);
    }
    m->has_symbols = dwfl_module_getsymtab(o.module) > 0;
    return o;
}

static bool add_location(struct cached_frame *f, const char *function, const char *file,
                         unsigned line, bool inlined)
{
    struct report_location *l =
        array_push(&f->locations, &f->location_count, &f->location_capacity, sizeof *l);
    if (l == NULL)
        return false;
    *l = (struct report_location){report_copy_string(function), report_copy_string(file), line,
                                  inlined};
    return true;
}

static bool is_function_scope(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* The source file of an inlined call (DW_AT_call_file), or NULL. */
static const char *call_file(Dwarf_Die *cu, Dwarf_Die *inlined)
{
    Dwarf_Attribute attr;
    Dwarf_Word index;
    Dwarf_Files *files;
    size_t count;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &index) != 0 ||
        dwarf_getsrcfiles(cu, &files, &count) != 0 || index >= count)
        return NULL;
    return dwarf_filesrc(files, index, NULL, NULL);
}

static unsigned call_line(Dwarf_Die *inlined)
{
    Dwarf_Attribute attr;
    Dwarf_Word line;
    return dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &line) == 0 ? (unsigned)line
                                                                                    : 0;
}

/* A symbol as people read it: "__libc_start_main@@GLIBC_2.34" without its version, a C++ name
 * demangled without its parameter list ("std::deque<int, std::allocator<int> >::
 * _M_push_back_aux<int const&>"), as libiberty spells it, and a Rust one, legacy ("_ZN...17h
 * HASH E") or v0 ("_R...", what rustc's std is built with now), without its crate hashes
 * ("alloc::fmt::format::format_inner"), as libiberty's Rust demangler spells it. */
static const char *readable_name(const char *name, char *buf, size_t size)
{
    if (name == NULL)
        return NULL;
    const char *at = strchr(name, '@');
    const char *plain = name;
    if (at != NULL) {
        snprintf(buf, size, "%.*s", (int)(at - name), name);
        plain = buf;
    }
    if (strncmp(plain, "_Z", 2) != 0 && strncmp(plain, "_R", 2) != 0)
        return plain;
    char *demangled = cplus_demangle(plain, DMGL_ANSI);
    if (demangled == NULL)
        return plain;
    snprintf(buf, size, "%s", demangled);
    free(demangled);
    return buf;
}

/* An inlined function's linkage name (from its abstract origin), which names it whole as its
 * symbol would ("alloc::alloc::Global::alloc_impl", "std::__new_allocator<int>::allocate"),
 * where DW_AT_name has only its last part ("alloc_impl"): wrappers inlined into their caller
 * then match the skip globs as they do when called. NULL without one (C). */
static const char *linkage_name(Dwarf_Die *inlined)
{
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(inlined, DW_AT_linkage_name, &attr) == NULL &&
        dwarf_attr_integrate(inlined, DW_AT_MIPS_linkage_name, &attr) == NULL)
        return NULL;
    return dwarf_formstring(&attr);
}

/* Fills f's locations: one per inlined level, innermost first, then the real function. */
static void resolve(Dwfl_Module *module, struct cached_frame *f)
{
    /* A return address points after the call; the call itself is one byte earlier. */
    GElf_Addr address = f->offset > 0 ? f->offset - 1 : 0;
    GElf_Off symbol_offset;
    GElf_Sym symbol;
    const char *symbol_name =
        dwfl_module_addrinfo(module, address, &symbol_offset, &symbol, NULL, NULL, NULL);
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *source = dwfl_module_getsrc(module, address);
    if (source != NULL)
        file = dwfl_lineinfo(source, NULL, &line, NULL, NULL, NULL);

    char unversioned[1024];
    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(module, address, &bias);
    Dwarf_Die *scopes = NULL;
    int scope_count = cu ? dwarf_getscopes(cu, address - bias, &scopes) : 0;
    /* dwarf_getscopes continues from an inlined function into its abstract definition's
     * parents; the concrete chain of callers comes from the innermost DIE's own parents. */
    if (scope_count > 0) {
        Dwarf_Die innermost = scopes[0];
        free(scopes);
        scopes = NULL;
        scope_count = dwarf_getscopes_die(&innermost, &scopes);
    }
    for (int i = 0; i < scope_count; i++) {
        if (!is_function_scope(&scopes[i]))
            continue;
        bool inlined = dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
        const char *name = inlined ? linkage_name(&scopes[i]) : symbol_name;
        if (name == NULL)
            name = dwarf_diename(&scopes[i]);
        name = readable_name(name, unversioned, sizeof unversioned);
        if (!add_location(f, name, file, (unsigned)line, inlined) || !inlined)
            break;
        file = call_file(cu, &scopes[i]);
        line = (int)call_line(&scopes[i]);
    }
    free(scopes);
    if (f->location_count == 0 && (symbol_name != NULL || file != NULL))
        add_location(f, readable_name(symbol_name, unversioned, sizeof unversioned), file,
                     (unsigned)line, false);
}

static uint64_t frame_hash(uint32_t module, uint64_t offset)
{
    return (offset * 0x9E3779B97F4A7C15ull) ^ module;
}

static struct cached_frame *cache_slot(struct cache *c, uint32_t module, uint64_t offset)
{
    size_t s = frame_hash(module, offset) & (c->capacity - 1);
    while (c->slots[s].used && (c->slots[s].module != module || c->slots[s].offset != offset))
        s = (s + 1) & (c->capacity - 1);
    return &c->slots[s];
}

static void copy_locations(struct report_frame *frame, const struct cached_frame *f)
{
    frame->locations = calloc(f->location_count + 1, sizeof *frame->locations);
    if (frame->locations == NULL)
        return;
    for (size_t i = 0; i < f->location_count; i++) {
        const struct report_location *l = &f->locations[i];
        frame->locations[i] = (struct report_location){
            report_copy_string(l->function), report_copy_string(l->file), l->line, l->inlined};
    }
    frame->location_count = f->location_count;
}

struct symbolizer {
    struct report *report;
    struct opened *opened;
    struct cache cache;
    FILE *warn;
    const char *debug_file; /* the main program's, or NULL */
};

static Dwfl_Module *module_for(struct symbolizer *s, uint32_t index)
{
    struct opened *o = &s->opened[index];
    if (!o->tried) {
        struct report_module *m = &s->report->modules[index];
        explicit_debug_file = m->is_main ? s->debug_file : NULL;
        *o = open_module(m, s->warn);
        if (o->module != NULL) { /* load the debug file now, while it is the one to use */
            Dwarf_Addr bias;
            dwfl_module_getdwarf(o->module, &bias);
            dwfl_module_getsymtab(o->module);
        }
        explicit_debug_file = NULL;
        o->tried = true;
    }
    return o->module;
}

static void symbolize_stack(struct symbolizer *s, struct report_stack *stack)
{
    struct cache *cache = &s->cache;
    for (size_t i = 0; i < stack->frame_count; i++) {
        struct report_frame *frame = &stack->frames[i];
        if (frame->module == REPORT_NO_MODULE || module_for(s, frame->module) == NULL)
            continue;
        struct cached_frame *f = cache_slot(cache, frame->module, frame->offset);
        if (!f->used) {
            *f = (struct cached_frame){frame->module, frame->offset, NULL, 0, 0, true};
            resolve(s->opened[frame->module].module, f);
            cache->used++;
        }
        copy_locations(frame, f);
    }
}

static size_t frames_in_report(const struct report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->site_count; i++)
        n += r->sites[i].stack.frame_count;
    for (size_t i = 0; i < r->violation_count; i++)
        n += r->violations[i].stack.frame_count;
    for (size_t i = 0; i < r->failure_count; i++)
        n += r->failures[i].stack.frame_count;
    return n;
}

static size_t main_module(const struct report *r)
{
    for (size_t i = 0; i < r->module_count; i++)
        if (r->modules[i].is_main)
            return i;
    return 0;
}

enum report_status report_symbolize(struct report *r, const char *binary, const char *debug_file,
                                    FILE *warn, char *error, size_t error_size)
{
    struct stat st;
    if (binary != NULL &&
        (access(binary, R_OK) != 0 || stat(binary, &st) != 0 || !S_ISREG(st.st_mode))) {
        snprintf(error, error_size, "--binary %s: cannot read it as a file", binary);
        return REPORT_INPUT_ERROR;
    }
    struct symbolizer s = {
        r, calloc(r->module_count + 1, sizeof *s.opened), {NULL, 64, 0}, warn, debug_file};
    while (s.cache.capacity < 2 * frames_in_report(r))
        s.cache.capacity *= 2;
    s.cache.slots = calloc(s.cache.capacity, sizeof *s.cache.slots);
    if (s.opened == NULL || s.cache.slots == NULL) {
        free(s.opened);
        free(s.cache.slots);
        snprintf(error, error_size, "out of memory");
        return REPORT_INPUT_ERROR;
    }
    size_t main = main_module(r);
    for (size_t i = 0; i < r->module_count; i++) {
        free(r->modules[i].file);
        r->modules[i].file = strdup(binary != NULL && i == main ? binary : r->modules[i].path);
        s.opened[i].tried = r->modules[i].file == NULL;
    }
    for (size_t i = 0; i < r->site_count; i++)
        symbolize_stack(&s, &r->sites[i].stack);
    for (size_t i = 0; i < r->violation_count; i++)
        symbolize_stack(&s, &r->violations[i].stack);
    for (size_t i = 0; i < r->failure_count; i++)
        symbolize_stack(&s, &r->failures[i].stack);
    for (size_t i = 0; i < s.cache.capacity; i++)
        report_locations_free(s.cache.slots[i].locations, s.cache.slots[i].location_count);
    free(s.cache.slots);
    for (size_t i = 0; i < r->module_count; i++)
        if (s.opened[i].dwfl != NULL)
            dwfl_end(s.opened[i].dwfl);
    free(s.opened);
    r->symbolized = true;
    return REPORT_OK;
}

void report_frame_describe(const struct report *r, const struct report_frame *frame, char *out,
                           size_t size)
{
    report_frame_describe_from(r, frame, 0, out, size);
}

void report_frame_describe_from(const struct report *r, const struct report_frame *frame,
                                size_t first, char *out, size_t size)
{
    report_frame_describe_level(r, frame, first, false, out, size);
}

void report_frame_describe_level(const struct report *r, const struct report_frame *frame,
                                 size_t first, bool short_names, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    const struct report_module *m =
        frame->module != REPORT_NO_MODULE ? &r->modules[frame->module] : NULL;
    char name[1024];
    for (size_t i = first; i < frame->location_count && used < size; i++) {
        const struct report_location *l = &frame->locations[i];
        const char *function = l->function ? l->function : "??";
        if (short_names)
            function = report_short_name(function, name, sizeof name);
        int n = snprintf(out + used, size - used, "%s%s", i > first ? " <- " : "", function);
        used += n > 0 ? (size_t)n : 0;
        if (l->file != NULL && used < size) {
            n = snprintf(out + used, size - used, " (%s:%u)", report_path_base_name(l->file),
                         l->line);
            used += n > 0 ? (size_t)n : 0;
        }
        if (l->inlined && used < size) {
            n = snprintf(out + used, size - used, " [inlined]");
            used += n > 0 ? (size_t)n : 0;
        }
    }
    if (frame->location_count == 0) {
        if (m != NULL)
            snprintf(out, size, "%s+0x%" PRIx64, report_path_base_name(m->path), frame->offset);
        else
            snprintf(out, size, "0x%" PRIx64, frame->offset);
        return;
    }
    if (m != NULL && m->mismatched && used + 2 < size)
        snprintf(out + used, size - used, " ?");
}
