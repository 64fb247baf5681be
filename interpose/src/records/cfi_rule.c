/* The unwind rule of one return address on x86-64 (where the caller's frame, its rbp and the next
 * return address are), read from the .eh_frame the loader mapped: libgcc's FDE lookup finds the
 * function's entry, and the CFA program is run here up to the address. Only what compilers emit for
 * ordinary frames is understood; anything else (expressions, signal frames, a CFA not on rsp or
 * rbp) is QA_RULE_UNKNOWN, and the stack goes to libunwind. Why not a library: docs/design.md,
 * "Stacks in always mode". Context: the slow path under the guard (the FDE lookup may allocate). */
#include <stdint.h>
#include <string.h>

#include "records.h"

/* libgcc's (unwind-dw2-fde.h, exported by libgcc_s since GCC 3.0), linked from libgcc_eh.a. */
struct dwarf_eh_bases {
    void *tbase, *dbase, *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16, SAVED_STATES = 4 };

enum how { SAME, AT_CFA, UNDEFINED, OTHER };

struct regs {
    int cfa_reg;
    int64_t cfa_off;
    enum how rbp, ra, rsp;
    int64_t rbp_off, ra_off;
};

struct interp {
    const uint8_t *p, *end;
    int64_t code_align, data_align;
    struct regs now, initial, saved[SAVED_STATES];
    int depth;
    bool bad;
};

static uint64_t uleb(struct interp *in)
{
    uint64_t v = 0;
    for (unsigned shift = 0; in->p < in->end; shift += 7) {
        uint8_t b = *in->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    in->bad = true;
    return 0;
}

static int64_t sleb(struct interp *in)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0x80;
    while (in->p < in->end && (b & 0x80)) {
        b = *in->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    }
    if (b & 0x80)
        in->bad = true;
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

static void skip(struct interp *in, uint64_t n)
{
    if (n > (uint64_t)(in->end - in->p))
        in->bad = true;
    else
        in->p += n;
}

/* The size of a value in DW_EH_PE encoding enc (0: omitted; -1: a LEB128; -2: not understood). */
static int encoded_size(uint8_t enc)
{
    if (enc == 0xff)
        return 0;
    switch (enc & 0x0f) {
    case 0x00:
    case 0x04:
    case 0x0c:
        return 8;
    case 0x02:
    case 0x0a:
        return 2;
    case 0x03:
    case 0x0b:
        return 4;
    case 0x01:
    case 0x09:
        return -1;
    default:
        return -2;
    }
}

static void skip_encoded(struct interp *in, uint8_t enc)
{
    int size = encoded_size(enc);
    if (size == -1)
        (void)uleb(in);
    else if (size < 0 || (enc & 0x70) == 0x50) /* DW_EH_PE_aligned */
        in->bad = true;
    else
        skip(in, (uint64_t)size);
}

static void set_reg(struct regs *r, uint64_t reg, enum how how, int64_t off)
{
    if (reg == DW_RBP)
        r->rbp = how, r->rbp_off = off;
    else if (reg == DW_RA)
        r->ra = how, r->ra_off = off;
    else if (reg == DW_RSP)
        r->rsp = how;
}

static void restore_reg(struct interp *in, uint64_t reg)
{
    if (reg == DW_RBP)
        in->now.rbp = in->initial.rbp, in->now.rbp_off = in->initial.rbp_off;
    else if (reg == DW_RA)
        in->now.ra = in->initial.ra, in->now.ra_off = in->initial.ra_off;
    else if (reg == DW_RSP)
        in->now.rsp = in->initial.rsp;
}

static void remember(struct interp *in, bool push)
{
    if (push && in->depth < SAVED_STATES)
        in->saved[in->depth++] = in->now;
    else if (!push && in->depth > 0)
        in->now = in->saved[--in->depth];
    else
        in->bad = true;
}

/* The opcodes without the low-bits operand (DWARF 5, 6.4.2), those that touch the CFA first. */
static void run_cfa_op(struct interp *in, uint8_t op)
{
    switch (op) {
    case 0x0c: /* def_cfa */
        in->now.cfa_reg = (int)uleb(in);
        in->now.cfa_off = (int64_t)uleb(in);
        return;
    case 0x0d: /* def_cfa_register */
        in->now.cfa_reg = (int)uleb(in);
        return;
    case 0x0e: /* def_cfa_offset */
        in->now.cfa_off = (int64_t)uleb(in);
        return;
    case 0x12: /* def_cfa_sf */
        in->now.cfa_reg = (int)uleb(in);
        in->now.cfa_off = sleb(in) * in->data_align;
        return;
    case 0x13: /* def_cfa_offset_sf */
        in->now.cfa_off = sleb(in) * in->data_align;
        return;
    default: /* def_cfa_expression, set_loc, the vendors' own: not followed */
        in->bad = true;
    }
}

static void run_reg_op(struct interp *in, uint8_t op)
{
    uint64_t reg = uleb(in);
    switch (op) {
    case 0x05: /* offset_extended */
        set_reg(&in->now, reg, AT_CFA, (int64_t)uleb(in) * in->data_align);
        return;
    case 0x11: /* offset_extended_sf */
        set_reg(&in->now, reg, AT_CFA, sleb(in) * in->data_align);
        return;
    case 0x06: /* restore_extended */
        restore_reg(in, reg);
        return;
    case 0x07: /* undefined */
        set_reg(&in->now, reg, UNDEFINED, 0);
        return;
    case 0x08: /* same_value */
        set_reg(&in->now, reg, SAME, 0);
        return;
    case 0x09: /* register */
        (void)uleb(in);
        set_reg(&in->now, reg, OTHER, 0);
        return;
    case 0x10: /* expression */
    case 0x16: /* val_expression */
        skip(in, uleb(in));
        set_reg(&in->now, reg, OTHER, 0);
        return;
    case 0x14: /* val_offset */
        (void)uleb(in);
        set_reg(&in->now, reg, OTHER, 0);
        return;
    case 0x15: /* val_offset_sf */
        (void)sleb(in);
        set_reg(&in->now, reg, OTHER, 0);
        return;
    default:
        in->bad = true;
    }
}

/* One instruction; its location advance (0 for most) in *advance. */
static void run_op(struct interp *in, uint64_t *advance)
{
    uint8_t op = *in->p++;
    *advance = 0;
    switch (op >> 6) {
    case 1: /* advance_loc */
        *advance = (uint64_t)(op & 0x3f) * (uint64_t)in->code_align;
        return;
    case 2: /* offset */
        set_reg(&in->now, op & 0x3f, AT_CFA, (int64_t)uleb(in) * in->data_align);
        return;
    case 3: /* restore */
        restore_reg(in, op & 0x3f);
        return;
    }
    uint64_t delta = 0;
    switch (op) {
    case 0x00: /* nop */
        return;
    case 0x02: /* advance_loc1 */
    case 0x03: /* advance_loc2 */
    case 0x04: /* advance_loc4 */ {
        unsigned size = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;
        if ((size_t)(in->end - in->p) < size) {
            in->bad = true;
            return;
        }
        memcpy(&delta, in->p, size); /* little-endian, as x86-64 */
        in->p += size;
        *advance = delta * (uint64_t)in->code_align;
        return;
    }
    case 0x0a: /* remember_state */
    case 0x0b: /* restore_state */
        remember(in, op == 0x0a);
        return;
    case 0x2e: /* GNU_args_size: the stack's arguments, no bearing on where the frame is */
        (void)uleb(in);
        return;
    case 0x05:
    case 0x06:
    case 0x07:
    case 0x08:
    case 0x09:
    case 0x10:
    case 0x11:
    case 0x14:
    case 0x15:
    case 0x16:
        run_reg_op(in, op);
        return;
    default:
        run_cfa_op(in, op);
    }
}

/* Runs from in->p to in->end, up to the location target (bytes from the function's start): the
 * rule in force at target is the one before the first advance past it, as libgcc reads it. */
static void run_program(struct interp *in, uint64_t target)
{
    uint64_t loc = 0, advance;
    while (in->p < in->end && !in->bad) {
        run_op(in, &advance);
        loc += advance;
        if (loc > target)
            return;
    }
}

struct cie {
    const uint8_t *insns, *end;
    uint8_t fde_enc;
    bool has_z;
};

/* The CIE's fields this reader needs; false for what it does not follow (a signal frame's 'S',
 * the ancient "eh" field, a return-address column other than x86-64's). */
static bool read_cie(const uint8_t *cie, struct interp *in, struct cie *out)
{
    uint32_t length;
    memcpy(&length, cie, 4);
    if (length == 0 || length == 0xffffffff)
        return false;
    in->p = cie + 8; /* past the length and the CIE id */
    in->end = cie + 4 + length;
    uint8_t version = *in->p++;
    const char *aug = (const char *)in->p;
    size_t aug_len = strnlen(aug, (size_t)(in->end - in->p));
    in->p += aug_len + 1;
    if (strchr(aug, 'S') != NULL || strstr(aug, "eh") != NULL || (aug_len > 0 && aug[0] != 'z'))
        return false;
    in->code_align = (int64_t)uleb(in);
    in->data_align = sleb(in);
    uint64_t ra_column = version == 1 ? *in->p++ : uleb(in);
    if (ra_column != DW_RA)
        return false;
    out->has_z = aug_len > 0;
    out->fde_enc = 0; /* DW_EH_PE_absptr when the CIE names none */
    if (out->has_z) {
        uint64_t data_len = uleb(in);
        const uint8_t *data_end = in->p + data_len;
        for (const char *a = aug + 1; *a != '\0' && !in->bad; a++) {
            if (*a == 'R')
                out->fde_enc = *in->p++;
            else if (*a == 'L')
                in->p++;
            else if (*a == 'P') {
                uint8_t enc = *in->p++;
                skip_encoded(in, enc);
            } else
                return false;
        }
        in->p = data_end;
    }
    out->insns = in->p;
    out->end = in->end;
    return !in->bad && in->p <= in->end;
}

/* The rule packed as stacks.h's QA_RULE_* bits, from the registers' state at the address. */
static uint64_t pack(const struct regs *r)
{
    if (r->rsp != SAME || (r->cfa_reg != DW_RSP && r->cfa_reg != DW_RBP))
        return QA_RULE_UNKNOWN;
    if (r->cfa_off < INT16_MIN || r->cfa_off > INT16_MAX)
        return QA_RULE_UNKNOWN;
    uint64_t rule = (uint16_t)(int16_t)r->cfa_off;
    if (r->cfa_reg == DW_RBP)
        rule |= QA_RULE_CFA_RBP;
    if (r->rbp == AT_CFA) {
        if (r->rbp_off < INT16_MIN || r->rbp_off > INT16_MAX)
            return QA_RULE_UNKNOWN;
        rule |= (uint64_t)(uint16_t)(int16_t)r->rbp_off << 16 | QA_RULE_RBP_SAVED;
    } else if (r->rbp != SAME) {
        return QA_RULE_UNKNOWN;
    }
    if (r->ra == UNDEFINED)
        return rule | QA_RULE_LAST;
    if (r->ra != AT_CFA || r->ra_off != -8)
        return QA_RULE_UNKNOWN;
    return rule;
}

uint64_t qa_cfi_rule(uintptr_t return_address)
{
    struct dwarf_eh_bases bases;
    const uint8_t *fde = _Unwind_Find_FDE((void *)(return_address - 1), &bases);
    if (fde == NULL)
        return QA_RULE_UNKNOWN;
    uint32_t length;
    int32_t cie_delta;
    memcpy(&length, fde, 4);
    memcpy(&cie_delta, fde + 4, 4);
    if (length == 0xffffffff)
        return QA_RULE_UNKNOWN;
    struct interp in = {0};
    struct cie cie;
    if (!read_cie(fde + 4 - cie_delta, &in, &cie))
        return QA_RULE_UNKNOWN;
    /* The defaults before the CIE's program: rsp is the CFA, rbp and the return address kept. */
    in.now = (struct regs){.cfa_reg = -1, .rbp = SAME, .ra = SAME, .rsp = SAME};
    in.p = cie.insns, in.end = cie.end;
    run_program(&in, UINT64_MAX);
    in.initial = in.now;
    in.depth = 0;
    /* The FDE: past its function's start and length (the start is bases.func) and its
     * augmentation data, to its program. */
    in.p = fde + 8, in.end = fde + 4 + length;
    skip_encoded(&in, cie.fde_enc);
    skip_encoded(&in, cie.fde_enc & 0x0f);
    if (cie.has_z)
        skip(&in, uleb(&in));
    run_program(&in, return_address - 1 - (uintptr_t)bases.func);
    return in.bad ? QA_RULE_UNKNOWN : pack(&in.now);
}
