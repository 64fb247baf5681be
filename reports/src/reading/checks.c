/* Check statuses: pass, fail, or n/a when a check could not apply (no queue hook was seen, no
 * connection was opened). A dump from before checks[].status gets it derived from `passed` and its
 * queue counters; several dumps' statuses merge into one per check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_reading.h"

const char *const report_check_status_names[3] = {"pass", "fail", "n/a"};

/* Whether the interposer accepted any hook event in this dump. */
static bool hooks_seen(const struct report_queues *q)
{
    return q->pushes || q->pops || q->discarded || q->moved || q->grows || q->shrinks ||
           q->returns_to_inline || q->opened || q->closed || q->by_hooks ||
           q->events_without_connection || q->depth_histogram_count;
}

/* Why a passed check of this dump could not apply, or NULL when it applied. */
static const char *not_applicable_because(const struct report *dump, const char *name)
{
    const struct report_queues *q = &dump->queues;
    bool queue_check = strcmp(name, "depth_one_no_alloc") == 0 || strcmp(name, "conservation") == 0;
    if (queue_check && !hooks_seen(q))
        return q->refused_events
                   ? "no queue hook event was accepted: the program's hooks use another ABI"
                   : "no queue hook events: the program does not call qaudit_hook";
    if (strcmp(name, "connections_closed") == 0 && q->opened == 0 && q->closed == 0)
        return "no connection was opened (no CONN_OPEN hook events)";
    return NULL;
}

void report_check_derive(const struct report *dump, struct report_check *check)
{
    if (check->failed)
        return;
    const char *because = not_applicable_because(dump, check->name);
    if (because == NULL)
        return;
    check->status = CHECK_NA;
    check->not_applicable = 1;
    free(check->detail);
    check->detail = report_copy_string(because);
}

enum report_check_status report_check_status(const struct report_check *c)
{
    if (c->failed > 0)
        return CHECK_FAIL;
    if (c->dumps > 0 && c->not_applicable == c->dumps)
        return CHECK_NA;
    return CHECK_PASS;
}

const struct report_check *report_check_named(const struct report *r, const char *name)
{
    for (size_t i = 0; i < r->check_count; i++)
        if (strcmp(r->checks[i].name, name) == 0)
            return &r->checks[i];
    return NULL;
}

bool report_check_passed(const struct report_check *c)
{
    return report_check_status(c) == CHECK_PASS;
}

bool report_passed(const struct report *r)
{
    for (size_t i = 0; i < r->check_count; i++)
        if (report_check_status(&r->checks[i]) == CHECK_FAIL)
            return false;
    return true;
}

void report_check_tally(const struct report *r, unsigned tally[3])
{
    tally[CHECK_PASS] = tally[CHECK_FAIL] = tally[CHECK_NA] = 0;
    for (size_t i = 0; i < r->check_count; i++)
        tally[report_check_status(&r->checks[i])]++;
}

/* The merged detail: the one dump's own, or how the dumps went. */
static char *merged_detail(const struct report_check *to, const char *first_na)
{
    char detail[1024];
    unsigned passed = to->dumps - to->failed - to->not_applicable;
    if (to->failed > 0)
        snprintf(detail, sizeof detail, "failed in %u of %u dumps; the first: %s", to->failed,
                 to->dumps, to->first_failure ? to->first_failure : "?");
    else if (to->not_applicable == to->dumps)
        snprintf(detail, sizeof detail, "n/a in all %u dumps: %s", to->dumps, first_na);
    else if (to->not_applicable > 0)
        snprintf(detail, sizeof detail, "passed in %u of %u dumps, n/a in the other %u (%s)",
                 passed, to->dumps, to->not_applicable, first_na);
    else
        snprintf(detail, sizeof detail, "passed in all %u dumps", to->dumps);
    return strdup(detail);
}

static struct report_check *check_named(struct report *into, const char *name)
{
    for (size_t j = 0; j < into->check_count; j++)
        if (strcmp(into->checks[j].name, name) == 0)
            return &into->checks[j];
    struct report_check *added =
        array_push(&into->checks, &into->check_count, &into->check_capacity, sizeof *added);
    if (added != NULL)
        added->name = report_copy_string(name);
    return added;
}

void report_checks_merge(struct report *into, const struct report *dump)
{
    uint64_t pid = dump->process_count ? dump->processes[0].pid : 0;
    for (size_t i = 0; i < dump->check_count; i++) {
        const struct report_check *c = &dump->checks[i];
        struct report_check *to = check_named(into, c->name);
        if (to == NULL)
            return;
        to->dumps++;
        to->failed += c->failed ? 1 : 0;
        to->not_applicable += c->status == CHECK_NA;
        if (c->failed && to->failed == 1) {
            char detail[1024];
            snprintf(detail, sizeof detail, "pid %llu: %s", (unsigned long long)pid, c->detail);
            to->first_failure = strdup(detail);
        }
        if (c->status == CHECK_NA && (to->na_detail == NULL))
            to->na_detail = report_copy_string(c->detail);
        free(to->detail);
        to->detail = to->dumps == 1 ? report_copy_string(c->detail)
                                    : merged_detail(to, to->na_detail ? to->na_detail : "?");
        to->status = report_check_status(to);
    }
}
