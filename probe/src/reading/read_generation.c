/* Which read this is (probe_reading.h). */
#include "probe_reading.h"

static _Thread_local unsigned generation;

unsigned probe_read_generation(void)
{
    return generation;
}

void probe_read_generation_next(void)
{
    generation++;
}
