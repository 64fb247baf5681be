#!/bin/sh
# shellcheck disable=SC2086 # the lists below are split into words on purpose
# What a signal handler may reach, checked at link time (docs/design.md, "The interposer"): the
# interposer's objects, built once more with a section per function (handler_link_objects in
# interpose/tests/CMakeLists.txt), are linked from the functions declared QA_CTX_SIGNAL_SAFE in
# interpose/src (qa_dump_final, qa_dump_in_handler, the JSON writer, ...) with --gc-sections, so
# only the code those reach is kept, and with --wrap on each function no handler may call (malloc,
# stdio, the printf family, strerror, dlopen ...) and no __wrap_ definition: a call to one of them
# anywhere a handler reaches fails the link, and this test names it and where it is.
#
# The one reviewed exception: base/double_text.c, whose qa_double_text formats qa_json_double's
# per-connection averages with snprintf("%.6g"), which glibc does in a stack buffer, without malloc
# or locks, for a finite double. Its object is left out of the link and handler_link_exception.c
# stands in for it (CMakeLists.txt); every other object of the interposer is in.
#
# usage: handler_link.sh CC SRC_DIR WORK_DIR LIBS -- OBJECTS...
set -u
cc=$1 src=$2 work=$3 libs=$4
shift 5
mkdir -p "$work"

forbidden="malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign valloc
pvalloc strdup strndup fopen fdopen freopen fclose fread fwrite fputs fputc puts putchar fflush
fgets getline printf fprintf sprintf snprintf vprintf vfprintf vsprintf vsnprintf dprintf vdprintf
asprintf vasprintf strerror strerror_r perror syslog dlopen dlsym dlvsym dlerror dladdr
dl_iterate_phdr qsort localtime gmtime strftime setenv putenv pthread_mutex_lock"
wraps=""
for f in $forbidden; do wraps="$wraps --wrap=$f"; done

# The roots: every function a header declares QA_CTX_SIGNAL_SAFE.
roots=$(grep -rhoE 'QA_CTX_SIGNAL_SAFE [A-Za-z_ ]+\*?[ ]*\*?[a-z_0-9]+\(' "$src" --include='*.h' |
        sed -E 's/.*[ *]([a-z_0-9]+)\($/\1/' | sort -u)
if [ -z "$roots" ]; then
    echo "handler_link: no QA_CTX_SIGNAL_SAFE declaration found under $src" >&2
    exit 1
fi
undefined=""
for r in $roots; do undefined="$undefined -Wl,-u,$r"; done

# One relocatable object of them all, whose globals but the roots are made local: the
# interposer's own malloc, free, dlopen ... would otherwise be kept as definitions the C library
# binds to, and with them everything they reach. Constructors are dropped for the same reason
# (the start-up is no handler's).
echo "$roots" >"$work/roots.txt"
# Wrapped here, so that a call to malloc, free ... bound to the interposer's own definitions
# fails too (a call the preload makes to its own exported malloc).
if ! ld -r $wraps -o "$work/all.o" "$@" >"$work/link.log" 2>&1 ||
    ! objcopy -R .init_array -R .rela.init_array -R .fini_array -R .rela.fini_array \
        --keep-global-symbols="$work/roots.txt" "$work/all.o" "$work/reach.o" >>"$work/link.log" 2>&1; then
    cat "$work/link.log"
    exit 1
fi
if ! "$cc" -o "$work/handler_reach" -nostartfiles -Wl,-e,qa_dump_final -Wl,--gc-sections \
    -Wl,--defsym=__dso_handle=0 $undefined "$work/reach.o" $libs \
    >"$work/link.log" 2>&1; then
    if grep -q '__wrap_' "$work/link.log"; then
        echo "handler_link: code a signal handler reaches calls what no handler may call:"
        grep -E "in function|__wrap_" "$work/link.log" | sed -E 's/^[^ ]*ld: //'
    else
        cat "$work/link.log"
    fi
    exit 1
fi
echo "handler_link: $(echo "$roots" | wc -l) QA_CTX_SIGNAL_SAFE roots link without any of:" $forbidden
