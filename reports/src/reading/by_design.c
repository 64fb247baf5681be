/* Blocks held by design: what the C and C++ runtime allocate once and keep for the whole run,
 * which valgrind frees before it looks for leaks (__libc_freeres, __gnu_cxx::__freeres) and
 * heaptrack suppresses (its built-in list) or frees (__gnu_cxx::__freeres). Left among the leaks
 * they come first in every C++ program: libstdc++'s emergency exception pool is one block of
 * about 71 KiB against a leak of a few hundred bytes. A site is held by design when its stack
 * shows one of:
 *  - a library's initialisation before main: the stack's root is the dynamic loader (it ran the
 *    library's constructors before the program's entry point) and no frame is the program's
 *    (libstdc++'s pool, libgomp's settings: Debian's valgrind suppresses that one). Told by the
 *    modules' paths alone, so it holds when the library has no symbols (Debian ships libstdc++
 *    stripped). A library the program loads with dlopen, or a libstdc++ linked statically, is
 *    not caught this way;
 *  - a block the loader allocated itself: the innermost frame is the loader's (link maps, TLS and
 *    DTV; valgrind's default suppressions name the DTV's);
 *  - libstdc++'s emergency pool by its name, where libstdc++ is linked into the program;
 *  - a C library function whose blocks __libc_freeres frees and heaptrack suppresses: a stdio
 *    stream's buffer (the FILE of an fopen never fclosed stays a leak), NSS modules, iconv's
 *    configuration, timezone data, locale data, the atexit list, the static buffers of getpwnam
 *    and the like. By name: these need the C library's symbols (Debian's libc6 has them). */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports_reading.h"

static const struct {
    const char *function, *why;
} libc_functions[] = {
    {"_IO_file_doallocate", "a stdio stream's buffer"},
    {"__nss_*", "the C library's NSS modules"},
    {"nss_*", "the C library's NSS modules"},
    {"module_load", "the C library's NSS modules"},
    {"__gconv_read_conf", "iconv's configuration"},
    {"__gconv_load_cache", "iconv's configuration"},
    {"tzset_internal", "timezone data"},
    {"__tzfile_read", "timezone data"},
    {"_nl_*", "locale data"},
    {"*setlocale", "locale data"},
    {"__new_exitfn", "the atexit list"},
    {"getpw*", "a static result of the C library (getpwnam...)"},
    {"getgr*", "a static result of the C library (getgrnam...)"},
    {"gethostby*", "a static result of the C library (gethostbyname...)"},
    {"getservby*", "a static result of the C library (getservbyname...)"},
    {"getprotoby*", "a static result of the C library (getprotobyname...)"},
};

static bool module_is(const struct report *r, const struct report_frame *f, const char *part)
{
    return f->module != REPORT_NO_MODULE && strstr(r->modules[f->module].path, part) != NULL;
}

static bool loader_frame(const struct report *r, const struct report_frame *f)
{
    return module_is(r, f, "/ld-linux") || module_is(r, f, "/ld-musl");
}

static bool main_frame(const struct report *r, const struct report_frame *f)
{
    return f->module != REPORT_NO_MODULE && r->modules[f->module].is_main;
}

/* "allocated by libstdc++.so.6's initialisation before main": the library whose constructor
 * the loader called (the frame inside the loader's outermost ones). */
static char *library_start_up(const struct report *r, const struct report_stack *s)
{
    for (size_t i = 0; i < s->frame_count; i++)
        if (main_frame(r, &s->frames[i]))
            return NULL;
    size_t k = s->frame_count;
    while (k > 0 && loader_frame(r, &s->frames[k - 1]))
        k--;
    if (k == s->frame_count || k == 0) /* not rooted in the loader, or the loader's own */
        return NULL;
    const struct report_frame *f = &s->frames[k - 1];
    char *why = NULL;
    const char *library = f->module != REPORT_NO_MODULE ? r->modules[f->module].path : "?";
    if (asprintf(&why, "allocated by %s's initialisation before main",
                 report_path_base_name(library)) < 0)
        return NULL;
    return why;
}

static const char *libc_reason(const struct report *r, const struct report_frame *f)
{
    if (!module_is(r, f, "/libc.so"))
        return NULL;
    for (size_t l = 0; l < f->location_count; l++)
        for (size_t i = 0;
             f->locations[l].function && i < sizeof libc_functions / sizeof *libc_functions; i++)
            if (fnmatch(libc_functions[i].function, f->locations[l].function, 0) == 0)
                return libc_functions[i].why;
    return NULL;
}

static bool emergency_pool(const struct report_frame *f)
{
    for (size_t l = 0; l < f->location_count; l++) {
        const struct report_location *at = &f->locations[l];
        if ((at->function && strstr(at->function, "pool::pool") && at->file &&
             strstr(at->file, "eh_alloc.cc")) ||
            (at->function && strcmp(at->function, "(anonymous namespace)::pool::pool") == 0))
            return true;
    }
    return false;
}

/* Why a site's blocks are held by design, or NULL when they are not. */
static char *reason_of(const struct report *r, const struct report_stack *s)
{
    if (s->frame_count == 0)
        return NULL;
    for (size_t i = 0; i < s->frame_count; i++) {
        const struct report_frame *f = &s->frames[i];
        if (emergency_pool(f))
            return report_copy_string("libstdc++'s emergency exception pool");
        const char *why = libc_reason(r, f);
        if (why != NULL)
            return report_copy_string(why);
    }
    if (loader_frame(r, &s->frames[0]))
        return report_copy_string("the dynamic loader's own");
    return library_start_up(r, s);
}

void report_by_design_mark(struct report *r)
{
    for (size_t i = 0; i < r->site_count; i++) {
        free(r->sites[i].by_design);
        r->sites[i].by_design = reason_of(r, &r->sites[i].stack);
    }
}
