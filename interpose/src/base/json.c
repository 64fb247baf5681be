/* A JSON writer that needs no heap: it renders into mmap'd memory of its own, grown with mremap.
 * The dump is written with it while the audited process runs, even from a fatal signal handler,
 * so it never calls malloc or stdio.
 * Context: whatever writes a dump: the writer thread, the exit and exec hooks, and _exit and
 * fatal signal handlers (async-signal-safe: mmap and mremap only). */
#include <string.h>
#include <sys/mman.h>

#include "base.h"

/* The dump is rendered into private memory first and written in one go afterwards: the file's
 * descriptor then lives for a few system calls, not for the whole rendering, which leaves a
 * program that closes descriptors it does not know (fd closers) little room to take it. */
static bool grow_buffer(struct qa_json *j, size_t need)
{
    size_t capacity = j->capacity ? j->capacity : 1 << 16;
    while (capacity < need)
        capacity *= 2;
    void *p =
        j->buf ? mremap(j->buf, j->capacity, capacity, MREMAP_MAYMOVE)
               : mmap(NULL, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        j->failed = true;
        return false;
    }
    j->buf = p;
    j->capacity = capacity;
    return true;
}

void qa_json_raw(struct qa_json *j, const char *s, size_t n)
{
    if (j->failed || (j->len + n > j->capacity && !grow_buffer(j, j->len + n)))
        return;
    memcpy(j->buf + j->len, s, n);
    j->len += n;
}

/* Gives the rendering's memory back. */
void qa_json_release(struct qa_json *j)
{
    if (j->buf)
        munmap(j->buf, j->capacity);
    j->buf = NULL;
    j->capacity = j->len = 0;
}

/* One character: most of a dump's pieces are, so they skip the copy (a dump of a small forked
 * child is a fork's cost: bench/RESULTS.md, "A small child's dump"). */
static void put_char(struct qa_json *j, char c)
{
    if (!j->failed && j->len < j->capacity) {
        j->buf[j->len++] = c;
        return;
    }
    qa_json_raw(j, &c, 1);
}

static void comma(struct qa_json *j)
{
    if (j->need_comma)
        put_char(j, ',');
    j->need_comma = true;
}

static void string_body(struct qa_json *j, const char *s, size_t n);

void qa_json_key(struct qa_json *j, const char *key)
{
    comma(j);
    string_body(j, key, strlen(key));
    put_char(j, ':');
    j->need_comma = false;
}

void qa_json_begin_object(struct qa_json *j)
{
    comma(j);
    put_char(j, '{');
    j->need_comma = false;
}

void qa_json_end_object(struct qa_json *j)
{
    put_char(j, '}');
    j->need_comma = true;
}

void qa_json_begin_array(struct qa_json *j)
{
    comma(j);
    put_char(j, '[');
    j->need_comma = false;
}

void qa_json_end_array(struct qa_json *j)
{
    put_char(j, ']');
    j->need_comma = true;
}

/* Decimal digits of v at the end of a 20-byte buffer; returns where they start. Integers are
 * formatted by hand: a dump may be written from a fatal signal handler, where printf is not
 * async-signal-safe. */
static char *digits(char *end, uint64_t v)
{
    do
        *--end = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    return end;
}

size_t qa_u64_text(char *out, uint64_t v)
{
    char buf[20];
    char *first = digits(buf + sizeof buf, v);
    size_t n = (size_t)(buf + sizeof buf - first);
    memcpy(out, first, n);
    out[n] = '\0';
    return n;
}

/* A line of text built without printf (a check's detail in a fatal signal's dump): as snprintf
 * into out[size], cut at size - 1 characters, always NUL-terminated. */
void qa_text_begin(struct qa_text *t, char *out, size_t size)
{
    t->out = out;
    t->size = size;
    t->len = 0;
    if (size > 0)
        out[0] = '\0';
}

void qa_text_add(struct qa_text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->size == 0 || t->len >= t->size - 1)
        return;
    if (n > t->size - 1 - t->len)
        n = t->size - 1 - t->len;
    memcpy(t->out + t->len, s, n);
    t->len += n;
    t->out[t->len] = '\0';
}

void qa_text_u64(struct qa_text *t, uint64_t v)
{
    char number[21];
    qa_u64_text(number, v);
    qa_text_add(t, number);
}

void qa_json_u64(struct qa_json *j, uint64_t v)
{
    char buf[20];
    char *first = digits(buf + sizeof buf, v);
    comma(j);
    qa_json_raw(j, first, (size_t)(buf + sizeof buf - first));
}

void qa_json_i64(struct qa_json *j, int64_t v)
{
    char buf[21];
    char *first = digits(buf + sizeof buf, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    if (v < 0)
        *--first = '-';
    comma(j);
    qa_json_raw(j, first, (size_t)(buf + sizeof buf - first));
}

/* Per-connection averages, formatted by double_text.c (the one printf a fatal-signal dump
 * relies on). */
void qa_json_double(struct qa_json *j, double v)
{
    char text[40];
    size_t n = qa_double_text(text, sizeof text, v);
    comma(j);
    qa_json_raw(j, text, n);
}

void qa_json_hex(struct qa_json *j, uintptr_t v)
{
    static const char hex[] = "0123456789abcdef";
    char buf[21];
    char *p = buf + sizeof buf;
    *--p = '"';
    do
        *--p = hex[v & 15];
    while ((v >>= 4) != 0);
    *--p = 'x';
    *--p = '0';
    *--p = '"';
    comma(j);
    qa_json_raw(j, p, (size_t)(buf + sizeof buf - p));
}

void qa_json_bool(struct qa_json *j, bool v)
{
    comma(j);
    qa_json_raw(j, v ? "true" : "false", v ? 4 : 5);
}

/* Whether c goes into a JSON string as it is. */
static bool plain(unsigned char c)
{
    return c != '"' && c != '\\' && c >= 0x20 && c != 0x7f;
}

/* The text between quotes: runs of plain characters copied in one piece, each other character
 * escaped. */
static void string_body(struct qa_json *j, const char *s, size_t n)
{
    put_char(j, '"');
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && plain((unsigned char)s[run]))
            run++;
        qa_json_raw(j, s + i, run - i);
        if (run == n)
            break;
        unsigned char c = (unsigned char)s[run];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            qa_json_raw(j, esc, 2);
        } else {
            static const char hex[] = "0123456789abcdef";
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            qa_json_raw(j, esc, sizeof esc);
        }
        i = run + 1;
    }
    put_char(j, '"');
}

void qa_json_strn(struct qa_json *j, const char *s, size_t n)
{
    comma(j);
    string_body(j, s, n);
}

void qa_json_str(struct qa_json *j, const char *s)
{
    qa_json_strn(j, s, strlen(s));
}

void qa_json_frames(struct qa_json *j, void *const *frames, int depth)
{
    qa_json_key(j, QA_KEY(frames));
    qa_json_begin_array(j);
    for (int f = 0; f < depth; f++)
        qa_json_hex(j, (uintptr_t)frames[f]);
    qa_json_end_array(j);
}
