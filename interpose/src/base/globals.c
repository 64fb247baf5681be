/* The base layer's data read by its inline functions (globals.h): here, in a file that needs no
 * function of anyone's, so that reading them ties no file to another.
 * Context: data only, no function; globals.h says beside each variable who writes it. */
#include "globals.h"

atomic_int qa_ready;
bool qa_fast_path;
_Atomic bool qa_writer_waiting QA_FORK_STATE;
struct qa_thread qa_unregistered = {.gate = QA_GATE_UNREGISTERED}; /* never written */
__thread struct qa_thread *qa_tls_record __attribute__((tls_model("initial-exec"))) =
    &qa_unregistered;
_Alignas(64) char qa_bootstrap_arena[256 * 1024];
struct qa_real_allocator qa_real;
bool qa_usable_from_header;
bool qa_inert;
