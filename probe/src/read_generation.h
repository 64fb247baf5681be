/* Which read this is: what the unit checks and the scans cache about one read's file keys on it,
 * since a new Dwarf (and its units) may be allocated where the last read's were. A read starts
 * at probe_dwarf_errors_reset (dwarf_errors.h). Per thread. */
#ifndef PROBE_READ_GENERATION_H
#define PROBE_READ_GENERATION_H

/* A number that changes at each new read. */
unsigned probe_read_generation(void);

/* The next read starts. */
void probe_read_generation_next(void);

#endif
