/* The programs of a report: its processes grouped by executable (process.exe), and the one that
 * leads a report of several, the program that made the most allocation calls. A run through a
 * version-manager shim (pyenv's python3: bash, env, readlink and basename, then python) or a
 * launcher (pg_ctl, then postgres) holds several; what to look at first is the leading
 * program's, so that the helpers' leaks (bash frees nothing before it exits) never come first. */
#include <stdlib.h>
#include <string.h>

#include "reports_reading.h"

uint64_t report_program_id(const char *exe)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const char *c = exe ? exe : ""; *c != '\0'; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    return h == 0 || h == REPORT_PROGRAMS_SEVERAL ? 1 : h;
}

uint64_t report_programs_joined(uint64_t a, uint64_t b)
{
    return a == b ? a : REPORT_PROGRAMS_SEVERAL;
}

static int by_calls(const void *a, const void *b)
{
    const struct report_program *x = a, *y = b;
    if (x->alloc_calls != y->alloc_calls)
        return x->alloc_calls > y->alloc_calls ? -1 : 1;
    return strcmp(x->exe, y->exe);
}

/* A process image of a program: ordered by program, then pid, so that the images of one process
 * (its execs) are counted once. */
struct image {
    uint64_t program, pid;
};

static int by_program_pid(const void *a, const void *b)
{
    const struct image *x = a, *y = b;
    if (x->program != y->program)
        return x->program < y->program ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The program of id among count, or NULL. */
static struct report_program *find(struct report_program *all, size_t count, uint64_t id)
{
    for (size_t k = 0; k < count; k++)
        if (all[k].id == id)
            return &all[k];
    return NULL;
}

size_t report_programs(const struct report *r, struct report_program *out, size_t max)
{
    struct report_program *all = calloc(r->process_count + 1, sizeof *all);
    struct image *images = calloc(r->process_count + 1, sizeof *images);
    size_t count = 0;
    for (size_t i = 0; all != NULL && images != NULL && i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        uint64_t id = report_program_id(p->exe);
        struct report_program *program = find(all, count, id);
        if (program == NULL) {
            program = &all[count++];
            *program = (struct report_program){.exe = p->exe ? p->exe : "", .id = id};
        }
        program->alloc_calls += p->alloc_calls;
        images[i] = (struct image){id, p->pid};
    }
    if (all != NULL && images != NULL) {
        qsort(images, r->process_count, sizeof *images, by_program_pid);
        for (size_t i = 0; i < r->process_count; i++)
            if (i == 0 || by_program_pid(&images[i], &images[i - 1]) != 0)
                find(all, count, images[i].program)->processes++;
        qsort(all, count, sizeof *all, by_calls);
    }
    for (size_t i = 0; i < count && i < max; i++)
        out[i] = all[i];
    free(all);
    free(images);
    return count;
}

uint64_t report_lead_program(const struct report *r, const char **exe)
{
    struct report_program first[1];
    bool several = report_programs(r, first, 1) > 1;
    if (exe != NULL)
        *exe = several ? first[0].exe : NULL;
    return several ? first[0].id : 0;
}

bool report_site_of_lead(const struct report_site *s, uint64_t lead)
{
    return lead == 0 || s->program == lead;
}

double report_lead_live_bytes(const struct report *r, uint64_t lead)
{
    double bytes = 0;
    for (size_t i = 0; i < r->site_count; i++)
        if (report_site_of_lead(&r->sites[i], lead))
            bytes += r->sites[i].est.live_bytes;
    return bytes;
}
