/* An abbreviation table parsed from its bytes, not through libdw: libdw reads a children flag
 * other than 1 as "no children" and takes any attribute in any form on any tag, and those are
 * what a damaged byte in .debug_abbrev most often looks like. */
#include "probe_reading.h"

#include <dwarf.h>
#include <stdio.h>

enum {
    STRING = 1,
    REFERENCE = 2,
    CONSTANT = 4,
    FLAG = 8,
    EXPRESSION = 16, /* exprloc, and the blocks DWARF 2 and 3 held expressions and data in */
    SECTION = 32,    /* an offset into another section: line table, ranges, location lists */
    ADDRESS = 64,
    ANY = 255,
};

/* The classes each DWARF 5 attribute may take (DWARF 5, table 7.5.4); 0 for the reserved
 * codes. DWARF 2 and 3 wrote section offsets as data4 or data8, hence CONSTANT next to SECTION. */
static const unsigned char attribute_classes[DW_AT_loclists_base + 1] = {
    [DW_AT_sibling] = REFERENCE,
    [DW_AT_location] = EXPRESSION | SECTION | CONSTANT,
    [DW_AT_name] = STRING,
    [DW_AT_ordering] = CONSTANT,
    [DW_AT_byte_size] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_bit_offset] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_bit_size] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_stmt_list] = SECTION | CONSTANT,
    [DW_AT_low_pc] = ADDRESS,
    [DW_AT_high_pc] = ADDRESS | CONSTANT,
    [DW_AT_language] = CONSTANT,
    [DW_AT_discr] = REFERENCE,
    [DW_AT_discr_value] = CONSTANT,
    [DW_AT_visibility] = CONSTANT,
    [DW_AT_import] = REFERENCE,
    [DW_AT_string_length] = EXPRESSION | SECTION | CONSTANT | REFERENCE,
    [DW_AT_common_reference] = REFERENCE,
    [DW_AT_comp_dir] = STRING,
    [DW_AT_const_value] = EXPRESSION | CONSTANT | STRING,
    [DW_AT_containing_type] = REFERENCE,
    [DW_AT_default_value] = CONSTANT | REFERENCE | FLAG,
    [DW_AT_inline] = CONSTANT,
    [DW_AT_is_optional] = FLAG,
    [DW_AT_lower_bound] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_producer] = STRING,
    [DW_AT_prototyped] = FLAG,
    [DW_AT_return_addr] = EXPRESSION | SECTION | CONSTANT,
    [DW_AT_start_scope] = CONSTANT | SECTION,
    [DW_AT_bit_stride] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_upper_bound] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_abstract_origin] = REFERENCE,
    [DW_AT_accessibility] = CONSTANT,
    [DW_AT_address_class] = CONSTANT,
    [DW_AT_artificial] = FLAG,
    [DW_AT_base_types] = REFERENCE,
    [DW_AT_calling_convention] = CONSTANT,
    [DW_AT_count] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_data_member_location] = CONSTANT | EXPRESSION | SECTION,
    [DW_AT_decl_column] = CONSTANT,
    [DW_AT_decl_file] = CONSTANT,
    [DW_AT_decl_line] = CONSTANT,
    [DW_AT_declaration] = FLAG,
    [DW_AT_discr_list] = EXPRESSION,
    [DW_AT_encoding] = CONSTANT,
    [DW_AT_external] = FLAG,
    [DW_AT_frame_base] = EXPRESSION | SECTION | CONSTANT,
    [DW_AT_friend] = REFERENCE,
    [DW_AT_identifier_case] = CONSTANT,
    [DW_AT_macro_info] = SECTION | CONSTANT,
    [DW_AT_namelist_item] = REFERENCE,
    [DW_AT_priority] = REFERENCE,
    [DW_AT_segment] = EXPRESSION | SECTION | CONSTANT,
    [DW_AT_specification] = REFERENCE,
    [DW_AT_static_link] = EXPRESSION | SECTION | CONSTANT,
    [DW_AT_type] = REFERENCE,
    [DW_AT_use_location] = EXPRESSION | SECTION | CONSTANT,
    [DW_AT_variable_parameter] = FLAG,
    [DW_AT_virtuality] = CONSTANT,
    [DW_AT_vtable_elem_location] = EXPRESSION | SECTION | CONSTANT,
    [DW_AT_allocated] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_associated] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_data_location] = EXPRESSION,
    [DW_AT_byte_stride] = CONSTANT | EXPRESSION | REFERENCE,
    [DW_AT_entry_pc] = ADDRESS | CONSTANT,
    [0x53] = FLAG, /* DW_AT_use_UTF8 */
    [DW_AT_extension] = REFERENCE,
    [DW_AT_ranges] = SECTION | CONSTANT,
    [DW_AT_trampoline] = ADDRESS | FLAG | REFERENCE | STRING,
    [DW_AT_call_column] = CONSTANT,
    [DW_AT_call_file] = CONSTANT,
    [DW_AT_call_line] = CONSTANT,
    [DW_AT_description] = STRING,
    [DW_AT_binary_scale] = CONSTANT,
    [DW_AT_decimal_scale] = CONSTANT,
    [DW_AT_small] = REFERENCE,
    [DW_AT_decimal_sign] = CONSTANT,
    [DW_AT_digit_count] = CONSTANT,
    [DW_AT_picture_string] = STRING,
    [DW_AT_mutable] = FLAG,
    [DW_AT_threads_scaled] = FLAG,
    [DW_AT_explicit] = FLAG,
    [DW_AT_object_pointer] = REFERENCE,
    [DW_AT_endianity] = CONSTANT,
    [DW_AT_elemental] = FLAG,
    [DW_AT_pure] = FLAG,
    [DW_AT_recursive] = FLAG,
    [DW_AT_signature] = REFERENCE,
    [DW_AT_main_subprogram] = FLAG,
    [DW_AT_data_bit_offset] = CONSTANT,
    [DW_AT_const_expr] = FLAG,
    [DW_AT_enum_class] = FLAG,
    [DW_AT_linkage_name] = STRING,
    [DW_AT_string_length_bit_size] = CONSTANT,
    [DW_AT_string_length_byte_size] = CONSTANT,
    [DW_AT_rank] = CONSTANT | EXPRESSION,
    [DW_AT_str_offsets_base] = SECTION,
    [DW_AT_addr_base] = SECTION,
    [DW_AT_rnglists_base] = SECTION,
    [DW_AT_dwo_name] = STRING,
    [DW_AT_reference] = FLAG,
    [DW_AT_rvalue_reference] = FLAG,
    [DW_AT_macros] = SECTION,
    [DW_AT_call_all_calls] = FLAG,
    [DW_AT_call_all_source_calls] = FLAG,
    [DW_AT_call_all_tail_calls] = FLAG,
    [DW_AT_call_return_pc] = ADDRESS,
    [DW_AT_call_value] = EXPRESSION,
    [DW_AT_call_origin] = EXPRESSION | REFERENCE, /* GCC writes a reference */
    [DW_AT_call_parameter] = REFERENCE,
    [DW_AT_call_pc] = ADDRESS,
    [DW_AT_call_tail_call] = FLAG,
    [DW_AT_call_target] = EXPRESSION,
    [DW_AT_call_target_clobbered] = EXPRESSION,
    [DW_AT_call_data_location] = EXPRESSION,
    [DW_AT_call_data_value] = EXPRESSION,
    [DW_AT_noreturn] = FLAG,
    [DW_AT_alignment] = CONSTANT,
    [DW_AT_export_symbols] = FLAG,
    [DW_AT_deleted] = FLAG,
    [DW_AT_defaulted] = CONSTANT,
    [DW_AT_loclists_base] = SECTION,
};

/* The class of a form, 0 for no form. DW_FORM_indirect is refused: no compiler emits it (the
 * form would be in each DIE), and a damaged form byte that turns into it makes the DIE swallow
 * the bytes of the next ones while libdw, readelf and gdb read on without a word (the fuzzer
 * found one that lost a union's member). */
static unsigned form_class(unsigned form)
{
    switch (form) {
    case DW_FORM_string:
    case DW_FORM_strp:
    case DW_FORM_line_strp:
    case DW_FORM_strp_sup:
    case DW_FORM_strx:
    case DW_FORM_strx1:
    case DW_FORM_strx2:
    case DW_FORM_strx3:
    case DW_FORM_strx4:
    case DW_FORM_GNU_str_index:
    case DW_FORM_GNU_strp_alt:
        return STRING;
    case DW_FORM_ref1:
    case DW_FORM_ref2:
    case DW_FORM_ref4:
    case DW_FORM_ref8:
    case DW_FORM_ref_udata:
    case DW_FORM_ref_addr:
    case DW_FORM_ref_sig8:
    case DW_FORM_ref_sup4:
    case DW_FORM_ref_sup8:
    case DW_FORM_GNU_ref_alt:
        return REFERENCE;
    case DW_FORM_data1:
    case DW_FORM_data2:
    case DW_FORM_data4:
    case DW_FORM_data8:
    case DW_FORM_data16:
    case DW_FORM_sdata:
    case DW_FORM_udata:
    case DW_FORM_implicit_const:
        return CONSTANT;
    case DW_FORM_flag:
    case DW_FORM_flag_present:
        return FLAG;
    case DW_FORM_exprloc:
    case DW_FORM_block:
    case DW_FORM_block1:
    case DW_FORM_block2:
    case DW_FORM_block4:
        return EXPRESSION;
    case DW_FORM_sec_offset:
    case DW_FORM_loclistx:
    case DW_FORM_rnglistx:
        return SECTION;
    case DW_FORM_addr:
    case DW_FORM_addrx:
    case DW_FORM_addrx1:
    case DW_FORM_addrx2:
    case DW_FORM_addrx3:
    case DW_FORM_addrx4:
    case DW_FORM_GNU_addr_index:
        return ADDRESS;
    default:
        return 0;
    }
}

static unsigned classes_of(unsigned name)
{
    if (name >= DW_AT_lo_user && name <= DW_AT_hi_user)
        return ANY; /* a vendor's attribute: its forms are the vendor's */
    return name < sizeof attribute_classes ? attribute_classes[name] : 0;
}

/* Tags of DWARF 5 (as elfutils' dwarf.h lists them) and of vendors. */
static bool known_tag(unsigned long long tag)
{
    static const unsigned char reserved[] = {0x06, 0x07, 0x09, 0x0c, 0x0e, 0x14, 0x3e};
    if (tag >= DW_TAG_lo_user && tag <= DW_TAG_hi_user)
        return true;
    if (tag == 0 || tag > DW_TAG_immutable_type)
        return false;
    for (size_t i = 0; i < sizeof reserved; i++)
        if (tag == reserved[i])
            return false;
    return true;
}

/* Whether a DIE of tag may carry attribute name, for the attributes whose owners are few: a
 * member's place belongs to members (and bases, and to DWARF 4's bit-fields in base types), a
 * size to types and members, an encoding to base types and enumerations, a producer, language,
 * line table or .dwo name to units. A DIE whose
 * tag was damaged still carries them; so does one whose attribute code was (a name become a
 * .dwo name). */
static bool owned_by(unsigned long long name, unsigned long long tag, enum abbrev_language language)
{
    if (tag >= DW_TAG_lo_user)
        return true;
    if (name == DW_AT_byte_size && tag == DW_TAG_subroutine_type)
        return language == ABBREV_GO;
    switch (name) {
    case DW_AT_data_member_location:
        return tag == DW_TAG_member || tag == DW_TAG_inheritance;
    case DW_AT_data_bit_offset:
        return tag == DW_TAG_member || tag == DW_TAG_base_type;
    case DW_AT_encoding: /* GCC also gives an enumeration its underlying type's */
        return tag == DW_TAG_base_type || tag == DW_TAG_enumeration_type;
    case DW_AT_byte_size:
        switch (tag) {
        case DW_TAG_array_type:
        case DW_TAG_base_type:
        case DW_TAG_class_type:
        case DW_TAG_enumeration_type:
        case DW_TAG_member:
        case DW_TAG_pointer_type:
        case DW_TAG_ptr_to_member_type:
        case DW_TAG_reference_type:
        case DW_TAG_rvalue_reference_type:
        case DW_TAG_set_type:
        case DW_TAG_string_type:
        case DW_TAG_structure_type:
        case DW_TAG_subrange_type:
        case DW_TAG_generic_subrange:
        case DW_TAG_union_type:
        case DW_TAG_unspecified_type:
        case DW_TAG_interface_type:
        case DW_TAG_coarray_type:
        case DW_TAG_dynamic_type:
        case DW_TAG_variant_part: /* Rust */
            return true;
        default:
            return false;
        }
    case DW_AT_producer:
    case DW_AT_comp_dir:
    case DW_AT_language:
    case DW_AT_stmt_list:
    case DW_AT_str_offsets_base:
    case DW_AT_addr_base:
    case DW_AT_rnglists_base:
    case DW_AT_loclists_base:
    case DW_AT_dwo_name:
    case DW_AT_GNU_dwo_name:
    case DW_AT_macros:
    case DW_AT_macro_info:
    case DW_AT_GNU_macros:
    case DW_AT_identifier_case:
    case DW_AT_base_types:
    case DW_AT_use_UTF8:
        return tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit ||
               tag == DW_TAG_type_unit || tag == DW_TAG_skeleton_unit;
    default:
        return true;
    }
}

/* Tags whose DIEs never have children: an abbreviation of one that says it has them was damaged
 * (or is another tag's, damaged). */
static bool childless(unsigned long long tag)
{
    switch (tag) {
    case DW_TAG_base_type:
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type:
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_restrict_type:
    case DW_TAG_atomic_type:
    case DW_TAG_typedef:
    case DW_TAG_member:
    case DW_TAG_inheritance:
    case DW_TAG_enumerator:
    case DW_TAG_formal_parameter:
    case DW_TAG_imported_declaration:
    case DW_TAG_imported_unit:
    case DW_TAG_unspecified_parameters:
    case DW_TAG_ptr_to_member_type:
    case DW_TAG_unspecified_type:
    case DW_TAG_template_type_parameter:
    case DW_TAG_template_value_parameter:
    case DW_TAG_label:
    case DW_TAG_subrange_type:
    case DW_TAG_string_type:
    case DW_TAG_set_type:
    case DW_TAG_file_type:
    case DW_TAG_packed_type:
    case DW_TAG_shared_type:
    case DW_TAG_immutable_type:
        return true;
    default:
        return false;
    }
}

/* Tags no C compiler writes: a C unit's table that has one was damaged (a typedef's tag turned
 * into a template alias, which libdw then does not see through). */
static bool cplusplus_only(unsigned long long tag)
{
    switch (tag) {
    case DW_TAG_class_type:
    case DW_TAG_namespace:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type:
    case DW_TAG_ptr_to_member_type:
    case DW_TAG_inheritance:
    case DW_TAG_template_type_parameter:
    case DW_TAG_template_value_parameter:
    case DW_TAG_template_alias:
    case DW_TAG_imported_module:
    case DW_TAG_friend:
    case DW_TAG_GNU_template_template_param:
    case DW_TAG_GNU_template_parameter_pack:
    case DW_TAG_GNU_formal_parameter_pack:
        return true;
    default:
        return false;
    }
}

/* What is wrong with an abbreviation's tag and children flag, or NULL. */
static const char *head_problem(unsigned long long code, unsigned long long tag, unsigned children,
                                enum abbrev_language language, char *why, size_t size)
{
    if (!known_tag(tag))
        snprintf(why, size, "abbreviation %llu has the unknown tag 0x%llx", code, tag);
    else if (language == ABBREV_C && cplusplus_only(tag))
        snprintf(why, size, "abbreviation %llu has the C++ tag 0x%llx in a C unit", code, tag);
    else if (children > DW_CHILDREN_yes)
        snprintf(why, size, "abbreviation %llu has the children flag %u, neither 0 nor 1", code,
                 children);
    else if (children == DW_CHILDREN_yes && childless(tag) &&
             !(language == ABBREV_GO && tag == DW_TAG_typedef))
        snprintf(why, size,
                 "abbreviation %llu of tag 0x%llx has children, which that tag never has", code,
                 tag);
    else
        return NULL;
    return why;
}

/* What is wrong with one attribute of an abbreviation, or NULL. A sibling on a DIE without
 * children is useless, and no producer writes one: it is a damaged children flag, which would
 * make the walk jump over what were the children. */
static const char *attribute_problem(unsigned long long code, unsigned long long tag,
                                     unsigned children, unsigned long long name,
                                     unsigned long long form, enum abbrev_language language,
                                     char *why, size_t size)
{
    unsigned allowed = name <= ~0u ? classes_of((unsigned)name) : 0;
    unsigned class = form <= ~0u ? form_class((unsigned)form) : 0;
    if (allowed == 0 || class == 0 || (class & allowed) == 0)
        snprintf(why, size, "abbreviation %llu has attribute 0x%llx in form 0x%llx, which %s", code,
                 name, form,
                 allowed == 0               ? "is no attribute"
                 : form == DW_FORM_indirect ? "qaudit does not read (no compiler emits it)"
                 : class == 0               ? "is no form"
                                            : "does not fit it");
    else if (!owned_by(name, tag, language))
        snprintf(why, size,
                 "abbreviation %llu of tag 0x%llx has attribute 0x%llx, which no DIE of that tag "
                 "has",
                 code, tag, name);
    else if (name == DW_AT_sibling && children == DW_CHILDREN_no)
        snprintf(why, size, "abbreviation %llu has a sibling but no children", code);
    else
        return NULL;
    return why;
}

/* One abbreviation at *p; NULL (past it) when well formed, else what is wrong. */
static const char *abbreviation(const unsigned char **p, const unsigned char *end,
                                unsigned long long code, enum abbrev_language language, char *why,
                                size_t size)
{
    unsigned long long tag, name, form, value;
    if (!probe_leb128(p, end, false, &tag) || *p >= end)
        return "is cut short";
    unsigned children = *(*p)++;
    if (head_problem(code, tag, children, language, why, size) != NULL)
        return why;
    for (;;) {
        if (!probe_leb128(p, end, false, &name) || !probe_leb128(p, end, false, &form))
            return "is cut short";
        if (name == 0 && form == 0)
            return NULL;
        if (form == DW_FORM_implicit_const && !probe_leb128(p, end, true, &value))
            return "is cut short";
        if (attribute_problem(code, tag, children, name, form, language, why, size) != NULL)
            return why;
    }
}

/* The table at [start, end): NULL when every abbreviation is well formed and the table ends. */
const char *probe_abbrev_table_problem(const unsigned char *start, const unsigned char *end,
                                       enum abbrev_language language, char *why, size_t size)
{
    const unsigned char *p = start;
    unsigned long long code;
    while (probe_leb128(&p, end, false, &code)) {
        if (code == 0)
            return NULL;
        const char *problem = abbreviation(&p, end, code, language, why, size);
        if (problem != NULL)
            return problem;
    }
    return "ends without its closing null entry";
}
