/* The entry points' own: the start-up they run on first use. Files: the .c files of entry/ (the
 * malloc family, the allocator shims' table, the queue hook), entry/start.c.
 * Context: each function's own file says where it runs and what is forbidden there. */
#ifndef QAUDIT_ENTRY_H
#define QAUDIT_ENTRY_H

#include "../base/base.h"

/* Whether the interposer is ready, starting it on the first call (start.c). */
bool qa_ready_now(void);
/* qaudit attach: start-up from the command's settings, then the entries redirected (start.c) */
int qa_start_attached(const char *settings);

#endif
