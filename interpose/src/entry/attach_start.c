/* qaudit_attach_start: what `qaudit attach` calls in the process, through ptrace, once it has
 * loaded the preload there with dlopen. settings: QAUDIT_*=VALUE strings, each ended by a NUL,
 * the block by an empty one (the program's environment is neither read nor changed). Returns
 * the GOT entries redirected (>= 0), or -EEXIST (the process started under the preload),
 * -EALREADY (attached now), another -errno (start-up failed). Context: one of the program's
 * threads, borrowed by the command while every other one is stopped. */
#include "entry.h"

QA_EXPORT int qaudit_attach_start(const char *settings)
{
    return qa_start_attached(settings);
}
