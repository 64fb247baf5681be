/* Which read this is (read_generation.h). */
#include "read_generation.h"

static _Thread_local unsigned generation;

unsigned probe_read_generation(void)
{
    return generation;
}

void probe_read_generation_next(void)
{
    generation++;
}
