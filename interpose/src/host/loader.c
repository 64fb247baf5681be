/* dlopen and dlclose: forwarded, each marked as a loader call fork must not split (stacks.c);
 * after it, the module map is gathered again and the site patterns resolved in the new module,
 * and a library loaded with RTLD_DEEPBIND is noted (its own malloc calls may bypass the preload).
 * Context: the program's calls, any thread; the interposer's work after them under the guard. */
#include <dlfcn.h>

#include "../output/output.h"
#include "host.h"

/* dlopen: forwarded, then the new module's symbols are scanned for the site patterns, and a
 * library loaded with RTLD_DEEPBIND is noted (its own malloc calls may bypass this preload). */
QA_EXPORT void *dlopen(const char *file, int flags)
{
    static void *(*next_dlopen)(const char *, int);
    if (next_dlopen == NULL)
        next_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    struct qa_thread *loader = qa_is_ready() ? qa_self() : NULL;
    if (loader)
        qa_loader_enter(loader);
    void *handle = next_dlopen ? next_dlopen(file, flags) : NULL;
    if (loader)
        qa_loader_leave(loader);
    if (handle != NULL && qa_is_ready()) {
        struct qa_thread *t = qa_self();
        bool was_busy = t ? qa_guard(t) : true;
        if (flags & RTLD_DEEPBIND)
            qa_dump_note_deepbind(file ? file : "(main program)");
        qa_modules_changed();
        qa_patterns_resolve();
        if (t)
            qa_guard_restore(t, was_busy);
    }
    return handle;
}

/* dlclose: forwarded, then the module map a fatal dump would use is gathered again. */
QA_EXPORT int dlclose(void *handle)
{
    static int (*next_dlclose)(void *);
    if (next_dlclose == NULL)
        next_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    struct qa_thread *loader = qa_is_ready() ? qa_self() : NULL;
    if (loader)
        qa_loader_enter(loader);
    int result = next_dlclose ? next_dlclose(handle) : -1;
    if (loader)
        qa_loader_leave(loader);
    if (qa_is_ready()) {
        struct qa_thread *t = qa_self();
        bool was_busy = t ? qa_guard(t) : true;
        qa_modules_changed();
        if (t)
            qa_guard_restore(t, was_busy);
    }
    return result;
}
