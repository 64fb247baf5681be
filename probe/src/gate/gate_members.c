/* Members in a baseline: which ones it names, their JSON, and what changed since it was written,
 * so that a broken size or class rule names the member that was added, grew or moved. */
#include "probe_gate.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool probe_gate_names_member(const struct layout_member *m)
{
    if (m->name[0] == '\0' || strstr(m->name, "{anonymous}") != NULL)
        return false;
    return m->depth == 0 || m->inline_only; /* not members of a named member's type */
}

const struct layout_member *probe_gate_find_member(const struct layout_type *t, const char *name)
{
    for (size_t i = 0; i < t->member_count; i++)
        if (probe_gate_names_member(&t->members[i]) && strcmp(t->members[i].name, name) == 0)
            return &t->members[i];
    return NULL;
}

static json_t *member_json(const struct layout_member *m)
{
    if (m->bit_offset >= 0)
        return json_pack("{s:I, s:I}", "bit_offset", (json_int_t)m->bit_offset, "bit_size",
                         (json_int_t)m->bit_size);
    return json_pack("{s:I, s:I}", "offset", (json_int_t)m->offset, "size", (json_int_t)m->size);
}

json_t *probe_gate_members_json(const struct layout_type *t)
{
    json_t *members = json_object();
    for (size_t i = 0; i < t->member_count; i++)
        if (probe_gate_names_member(&t->members[i]))
            json_object_set_new(members, t->members[i].name, member_json(&t->members[i]));
    return members;
}

static bool natural(json_t *value, long long *out)
{
    if (!json_is_integer(value) || json_integer_value(value) < 0)
        return false;
    *out = json_integer_value(value);
    return true;
}

bool probe_gate_member_parse(json_t *value, bool *bits, long long *offset, long long *size)
{
    if (!json_is_object(value) || json_object_size(value) != 2)
        return false;
    *bits = json_object_get(value, "bit_offset") != NULL;
    return natural(json_object_get(value, *bits ? "bit_offset" : "offset"), offset) &&
           natural(json_object_get(value, *bits ? "bit_size" : "size"), size);
}

/* Today's position and length of m in the units of the baseline: bits for a bit-field. */
static void now_of(const struct layout_member *m, bool bits, long long *offset, long long *length)
{
    *offset = bits ? m->bit_offset : (long long)m->offset;
    *length = bits ? (long long)m->bit_size : (long long)m->size;
}

static void describe_move(char *out, size_t size, bool bits, long long from, long long to)
{
    snprintf(out, size, "moved %s%lld -> %lld (%+lld%s)", bits ? "bit " : "", from, to, to - from,
             bits ? " bits" : " B");
}

static void describe_size(char *out, size_t size, bool bits, long long from, long long to)
{
    snprintf(out, size, "%s %lld -> %lld%s", to > from ? "grew" : "shrank", from, to,
             bits ? " bits" : " B");
}

bool probe_gate_member_change(const struct layout_member *m, json_t *want, char *out, size_t size)
{
    bool bits;
    long long offset, length, now, now_length;
    out[0] = '\0';
    if (!probe_gate_member_parse(want, &bits, &offset, &length))
        return false;
    if (bits != (m->bit_offset >= 0)) {
        snprintf(out, size, "%s", bits ? "is no longer a bit-field" : "became a bit-field");
        return true;
    }
    now_of(m, bits, &now, &now_length);
    char move[64] = "", grow[64] = "";
    if (now != offset)
        describe_move(move, sizeof move, bits, offset, now);
    if (now_length != length)
        describe_size(grow, sizeof grow, bits, length, now_length);
    snprintf(out, size, "%s%s%s", move, move[0] && grow[0] ? " and " : "", grow);
    return out[0] != '\0';
}

/* Appends ", " and an item to out; past three items only "...". */
static void add_item(char *out, size_t size, int *items, const char *name, const char *what)
{
    size_t n = strlen(out);
    if (++*items > 3) {
        if (*items == 4)
            snprintf(out + n, size - n, ", ...");
        return;
    }
    snprintf(out + n, size - n, "%s%s %s", n ? ", " : "", name, what);
}

/* A member the baseline knows, today: "" when unchanged or only moved (*moved then set). */
static void cause_of(const struct layout_member *m, json_t *want, bool complete, char *cause,
                     size_t size, bool *moved, char *move, size_t move_size)
{
    bool bits = false;
    long long offset, length, now, now_length;
    cause[0] = '\0';
    *moved = false;
    if (complete && !probe_gate_member_parse(want, &bits, &offset, &length))
        return;
    if (!complete) { /* "offsets": {"name": offset} */
        offset = json_integer_value(want);
        length = (long long)m->size;
    }
    if (complete && bits != (m->bit_offset >= 0)) {
        snprintf(cause, size, "%s", bits ? "is no longer a bit-field" : "became a bit-field");
        return;
    }
    now_of(m, bits, &now, &now_length);
    if (now_length != length)
        describe_size(cause, size, bits, length, now_length);
    else if ((*moved = now != offset))
        describe_move(move, move_size, bits, offset, now);
}

void probe_gate_explain(const struct layout_type *t, json_t *rules, char *out, size_t size)
{
    json_t *members = json_object_get(rules, "members");
    bool complete = json_is_object(members); /* "offsets" names some members only */
    json_t *known = complete ? members : json_object_get(rules, "offsets");
    out[0] = '\0';
    if (!json_is_object(known))
        return;
    int items = 0;
    char what[128], first_move[128] = "";
    const char *name, *first_moved = NULL;
    json_t *want;
    for (size_t i = 0; complete && i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        if (!probe_gate_names_member(m) || json_object_get(members, m->name) != NULL)
            continue;
        snprintf(what, sizeof what, "was added at offset %" PRIu64 " (%" PRIu64 " B)", m->offset,
                 m->size);
        add_item(out, size, &items, m->name, what);
    }
    size_t moved = 0;
    json_object_foreach(known, name, want)
    {
        const struct layout_member *m = probe_gate_find_member(t, name);
        bool did_move;
        char move[128];
        if (m == NULL) {
            add_item(out, size, &items, name, "is gone");
            continue;
        }
        cause_of(m, want, complete, what, sizeof what, &did_move, move, sizeof move);
        if (what[0])
            add_item(out, size, &items, name, what);
        if (did_move && moved++ == 0) {
            first_moved = name;
            snprintf(first_move, sizeof first_move, "%s", move);
        }
    }
    bool named = items == 0 && first_moved != NULL;
    if (named) { /* nothing was added, grew or went: name the first member that moved */
        add_item(out, size, &items, first_moved, first_move);
        moved--;
    }
    size_t n = strlen(out);
    if (moved > 0)
        snprintf(out + n, size - n, "; %zu %smember%s moved", moved, named ? "other " : "",
                 moved == 1 ? "" : "s");
}
