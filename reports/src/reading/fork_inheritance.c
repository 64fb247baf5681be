/* Forked children's inheritance by site. A child's dump lists the sites it allocated nothing at
 * only as [id, blocks, bytes] or, where it freed some of those blocks, [id, blocks, bytes,
 * freed_blocks, freed_bytes] (inherited_sites): the site table is inherited with the memory, so
 * the same id in a dump of the image it was forked from (process.forked_from), or of that one's
 * parent, and so on, holds the stack. Each such entry becomes a site of the child's dump with
 * only inherited figures; what no given dump holds is counted as unattributed. */
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_reading.h"

/* Parents of parents: a process tree deeper than this is not followed further. */
#define MAX_GENERATIONS 64

static bool is_image(const struct report *d, uint64_t pid, uint64_t start_ns)
{
    return d->process_count > 0 && d->processes[0].pid == pid &&
           d->processes[0].start_time_ns == start_ns;
}

/* The site with id among the dumps of the image dump was forked from, or their parents'. */
static const struct report_site *ancestor_site(const struct report *dumps, size_t count,
                                               const struct report *dump, uint64_t id,
                                               const struct report **owner)
{
    for (int generation = 0; generation < MAX_GENERATIONS && dump->process_count > 0;
         generation++) {
        const struct report_process *p = &dump->processes[0];
        if (!p->forked)
            return NULL;
        const struct report *next = NULL;
        for (size_t i = 0; i < count; i++) {
            if (!is_image(&dumps[i], p->forked_from_pid, p->forked_from_start_ns))
                continue;
            next = &dumps[i];
            for (size_t k = 0; k < dumps[i].site_count; k++)
                if (dumps[i].sites[k].id == id) {
                    *owner = &dumps[i];
                    return &dumps[i].sites[k];
                }
        }
        if (next == NULL)
            return NULL;
        dump = next;
    }
    return NULL;
}

/* The index in dump's modules of from's module m, added when dump has none like it. */
static uint32_t module_in(struct report *dump, const struct report *from, uint32_t m)
{
    if (m == REPORT_NO_MODULE || m >= from->module_count)
        return REPORT_NO_MODULE;
    const struct report_module *want = &from->modules[m];
    for (size_t i = 0; i < dump->module_count; i++)
        if (strcmp(dump->modules[i].path, want->path) == 0 &&
            strcmp(dump->modules[i].build_id, want->build_id) == 0)
            return (uint32_t)i;
    struct report_module *added =
        array_push(&dump->modules, &dump->module_count, &dump->module_capacity, sizeof *added);
    if (added == NULL)
        return REPORT_NO_MODULE;
    added->path = report_copy_string(want->path);
    added->build_id = report_copy_string(want->build_id);
    added->is_main = want->is_main;
    return (uint32_t)(dump->module_count - 1);
}

/* A site of dump with the stack of an ancestor's site and only the inheritance's figures. */
static void add_inherited_site(struct report *dump, const struct report *owner,
                               const struct report_site *model,
                               const struct report_inherited_site *in)
{
    uint32_t *map = calloc(owner->module_count + 1, sizeof *map);
    struct report_site *site =
        map ? array_push(&dump->sites, &dump->site_count, &dump->site_capacity, sizeof *site)
            : NULL;
    if (site == NULL) {
        free(map);
        return;
    }
    for (size_t i = 0; i < owner->module_count; i++)
        map[i] = module_in(dump, owner, (uint32_t)i);
    site->stack = report_stack_copy(&model->stack, map);
    site->inherited_blocks = in->blocks;
    site->inherited_bytes = in->bytes;
    site->inherited_freed = in->freed_blocks;
    site->inherited_freed_bytes = in->freed_bytes;
    free(map);
}

void report_inherited_resolve(struct report *dumps, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        struct report *dump = &dumps[i];
        for (size_t k = 0; k < dump->inherited_site_count; k++) {
            const struct report_inherited_site *in = &dump->inherited_sites[k];
            const struct report *owner = NULL;
            const struct report_site *model = ancestor_site(dumps, count, dump, in->id, &owner);
            if (model != NULL) {
                add_inherited_site(dump, owner, model, in);
                continue;
            }
            dump->totals.inherited.unattributed_blocks += in->blocks;
            dump->totals.inherited.unattributed_bytes += in->bytes;
        }
    }
}
