/* dlopen and dlclose: forwarded, each marked as a loader call fork must not split (stacks.c),
 * dlopen's name first resolved as its caller would have it (dlopen_name.c: glibc sees the
 * preload as the caller);
 * after it, the module map is gathered again and the site patterns resolved in the new module,
 * and a library loaded with RTLD_DEEPBIND is noted (its own malloc calls may bypass the preload).
 * Context: the program's calls, any thread; the interposer's work after them under the guard. */
#include <dlfcn.h>

#include "../output/output.h"
#include "host.h"

static void *(*next_dlopen)(const char *, int);
static int (*next_dlclose)(void *);

static void resolve_next(void)
{
    if (next_dlopen == NULL)
        next_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    if (next_dlclose == NULL)
        next_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
}

static bool already_loaded(const char *name)
{
    void *handle = next_dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    if (handle != NULL && next_dlclose != NULL)
        next_dlclose(handle);
    return handle != NULL;
}

/* dlopen: forwarded, then the new module's symbols are scanned for the site patterns, and a
 * library loaded with RTLD_DEEPBIND is noted (its own malloc calls may bypass this preload). */
QA_EXPORT void *dlopen(const char *file, int flags)
{
    resolve_next();
    if (next_dlopen == NULL)
        return NULL;
    char resolved[QA_PATH_MAX];
    const char *name = qa_dlopen_name(file, __builtin_return_address(0), already_loaded, resolved,
                                      sizeof resolved);
    struct qa_thread *loader = qa_is_ready() ? qa_self() : NULL;
    if (loader)
        qa_loader_enter(loader);
    void *handle = next_dlopen(name, flags);
    if (loader)
        qa_loader_leave(loader);
    if (handle != NULL && qa_is_ready()) {
        struct qa_thread *t = qa_self();
        bool was_busy = t ? qa_guard(t) : true;
        if (flags & RTLD_DEEPBIND)
            qa_dump_note_deepbind(file ? file : "(main program)");
        qa_modules_changed();
        qa_patterns_resolve();
        qa_attach_module_loaded();
        if (t)
            qa_guard_restore(t, was_busy);
    }
    return handle;
}

/* dlclose: forwarded, then the module map a fatal dump would use is gathered again. */
QA_EXPORT int dlclose(void *handle)
{
    resolve_next();
    struct qa_thread *loader = qa_is_ready() ? qa_self() : NULL;
    if (loader)
        qa_loader_enter(loader);
    int result = next_dlclose ? next_dlclose(handle) : -1;
    if (loader)
        qa_loader_leave(loader);
    qa_rules_forget(); /* the unwind rules of what was unloaded (records/unwind_rules.c) */
    if (qa_is_ready()) {
        struct qa_thread *t = qa_self();
        bool was_busy = t ? qa_guard(t) : true;
        qa_modules_changed();
        if (t)
            qa_guard_restore(t, was_busy);
    }
    return result;
}
