/* However a process ends, its run is not lost, and it ends exactly as it would without the
 * preload: exit, _exit, _Exit, quick_exit, fatal signals (the program's own crash handler or the
 * default action), exec; a vfork child writes nothing; every process and image gets a file of its
 * own; and in no stack mode does the program find a descriptor it did not open. */
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define BLOCKS 37     /* what fixture_endings allocates before it ends */
#define QUICK_FREED 7 /* what its at_quick_exit handler frees before the dump */

struct ending {
    const char *how;
    int status;         /* as natively: exit status, or 128 + signal */
    const char *reason; /* of the one dump */
    const char *signal; /* process.end_signal, or NULL */
    int frees;          /* totals.calls.free */
};

/* Runs fixture_endings natively and under the preload; both must end alike. Returns the status;
 * the preload run's stdout in out. */
static int run_both(const char *how, char *out, size_t size)
{
    const char *argv[] = {FIXTURE("fixture_endings"), how, NULL};
    char native_out[4096];
    struct captured_run native = {.argv = argv};
    int native_status = run_captured(&native, native_out, sizeof native_out);
    struct captured_run preloaded = {.argv = argv, .preload = true};
    int status = run_captured(&preloaded, out, size);
    assert_int_equal(status, native_status);
    assert_string_equal(out, native_out);
    return status;
}

static void test_every_ending_leaves_its_dump(void **state)
{
    (void)state;
    static const struct ending endings[] = {
        {"exit", 0, "exit", NULL, 0},
        {"_exit", 3, "_exit", NULL, 0},
        {"_Exit", 4, "_exit", NULL, 0},
        {"quick_exit", 6, "_exit", NULL, QUICK_FREED},
        {"quick_exit-in-handler", 6, "_exit", NULL, QUICK_FREED},
        {"segv", 128 + SIGSEGV, "fatal_signal", "SIGSEGV", 0},
        {"abort", 128 + SIGABRT, "fatal_signal", "SIGABRT", 0},
        {"fpe", 128 + SIGFPE, "fatal_signal", "SIGFPE", 0},
        {"ill", 128 + SIGILL, "fatal_signal", "SIGILL", 0},
        {"trap", 128 + SIGTRAP, "fatal_signal", "SIGTRAP", 0},
        {"bus", 128 + SIGBUS, "fatal_signal", "SIGBUS", 0},
        {"term", 128 + SIGTERM, "fatal_signal", "SIGTERM", 0},
        {"handler-then-default", 128 + SIGSEGV, "fatal_signal", "SIGSEGV", 0},
        {"recover", 0, "exit", NULL, 0},
        {"resethand-reraise", 128 + SIGTERM, "fatal_signal", "SIGTERM", 0},
        {"oneshot-nodefer", 128 + SIGTERM, "fatal_signal", "SIGTERM", 0},
        {"siginfo-reraise", 128 + SIGTERM, "fatal_signal", "SIGTERM", 0},
        {"signal-raise", 128 + SIGINT, "fatal_signal", "SIGINT", 0},
        {"handler-exits", 5, "exit", NULL, 0},
        {"resethand-read-back", 0, "exit", NULL, 0},
    };
    for (size_t i = 0; i < sizeof endings / sizeof endings[0]; i++) {
        const struct ending *e = &endings[i];
        fresh_dir();
        char out[4096];
        assert_int_equal(run_both(e->how, out, sizeof out), e->status);
        size_t count;
        json_t **dumps = load_all_dumps(&count);
        if (count != 1)
            fail_msg("%s: %zu dumps", e->how, count);
        json_t *d = dumps[0];
        assert_string_equal(json_string_value(json_object_get(d, "reason")), e->reason);
        const char *signal_name = str_at(d, "process", "end_signal");
        if (e->signal)
            assert_string_equal(signal_name, e->signal);
        else
            assert_null(signal_name);
        assert_int_equal(num(d, "totals.calls.malloc"), BLOCKS);
        assert_int_equal(num(d, "totals.calls.free"), e->frees);
        /* A handler of the program's took the signal: the dump names it. */
        if (strcmp(e->how, "handler-exits") == 0)
            assert_string_equal(str_at(d, "process", "last_signal"), "SIGTERM");
        assert_true(num(d, "process.end_time_ns") >= num(d, "process.start_time_ns"));
        free_dumps(dumps, count);
        remove_dir();
    }
}

/* The program reads back the dispositions it set, never the interposer's handlers. */
static void test_dispositions_read_back_as_set(void **state)
{
    (void)state;
    fresh_dir();
    char out[4096];
    assert_int_equal(run_both("read-back", out, sizeof out), 0);
    assert_string_equal(out, "SIGSEGV default\nSIGUSR2 default\nSIGTERM was ignored\n"
                             "SIGTERM default\n");
    remove_dir();
}

/* A vfork child shares its parent's memory and account: only the parent writes a dump. */
static void test_vfork_child_writes_none(void **state)
{
    (void)state;
    fresh_dir();
    char out[4096];
    assert_int_equal(run_both("vfork", out, sizeof out), 0);
    size_t count;
    json_t **dumps = load_all_dumps(&count);
    assert_int_equal(count, 1);
    assert_string_equal(json_string_value(json_object_get(dumps[0], "reason")), "exit");
    free_dumps(dumps, count);
    remove_dir();
}

/* A library's destructor that frees what its constructor kept (GnuTLS, p11-kit do) runs after the
 * preload's: the exit dump comes after every destructor and counts those frees. */
static void test_frees_in_library_destructors_are_counted(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_teardown"), NULL};
    char native_out[256], out[256];
    assert_int_equal(
        run_captured(&(struct captured_run){.argv = argv}, native_out, sizeof native_out), 0);
    assert_int_equal(
        run_captured(&(struct captured_run){.argv = argv, .preload = true}, out, sizeof out), 0);
    assert_string_equal(out, native_out);
    assert_string_equal(out, "library holds 20 blocks\n");
    size_t count;
    json_t **dumps = load_all_dumps(&count);
    assert_int_equal(count, 1);
    assert_string_equal(json_string_value(json_object_get(dumps[0], "reason")), "exit");
    assert_int_equal(num(dumps[0], "totals.calls.malloc"), 21); /* the library's 20, main's 1 */
    assert_int_equal(num(dumps[0], "totals.calls.free"), 21);
    assert_int_equal(num(dumps[0], "totals.live_blocks"), 0);
    free_dumps(dumps, count);
    remove_dir();
}

/* A main thread that leaves by pthread_exit while a thread of the program's goes on: the process
 * ends with that thread, as natively, though the preload's writer was running when main left
 * (it kept the process alive for good, all alone). timeout(1) bounds the run. */
static void test_main_thread_pthread_exit_ends_with_the_last_thread(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {"/usr/bin/timeout",  "-s", "KILL", "60", FIXTURE("fixture_endings"),
                          "main-pthread-exit", NULL};
    char native_out[256], out[256];
    assert_int_equal(
        run_captured(&(struct captured_run){.argv = argv}, native_out, sizeof native_out), 0);
    assert_int_equal(
        run_captured(&(struct captured_run){.argv = argv, .preload = true}, out, sizeof out), 0);
    assert_string_equal(out, "outlived main\n");
    assert_string_equal(out, native_out);
    size_t count, found = 0;
    json_t **dumps = load_all_dumps(&count); /* timeout's and the fixture's */
    for (size_t i = 0; i < count; i++) {
        const char *exe = str_at(dumps[i], "process", "exe");
        if (exe == NULL || strstr(exe, "fixture_endings") == NULL)
            continue;
        found++;
        assert_string_equal(json_string_value(json_object_get(dumps[i], "reason")), "exit");
        /* the thread's two blocks besides (glibc allocates for the thread too) */
        assert_true(num(dumps[i], "totals.calls.malloc") >= BLOCKS + 2);
    }
    assert_int_equal(found, 1);
    free_dumps(dumps, count);
    remove_dir();
}

/* exec: the old image dumps just before it is replaced, and the new image (same pid) gets a file
 * of its own beside it; a failed exec leaves the image counting, and its final dump replaces
 * its exec dump. */
static void test_exec_keeps_both_images(void **state)
{
    (void)state;
    fresh_dir();
    char out[4096];
    assert_int_equal(run_both("exec", out, sizeof out), 3);
    size_t count;
    json_t **dumps = load_all_dumps(&count);
    assert_int_equal(count, 2);
    int exec_dumps = 0, exit_dumps = 0;
    for (size_t i = 0; i < count; i++) {
        const char *reason = json_string_value(json_object_get(dumps[i], "reason"));
        exec_dumps += strcmp(reason, "exec") == 0;
        exit_dumps += strcmp(reason, "_exit") == 0;
        assert_int_equal(num(dumps[i], "totals.calls.malloc"), BLOCKS);
        assert_int_equal(num(dumps[i], "process.pid"), num(dumps[0], "process.pid"));
    }
    assert_int_equal(exec_dumps, 1);
    assert_int_equal(exit_dumps, 1);
    free_dumps(dumps, count);
    remove_dir();

    fresh_dir();
    assert_int_equal(run_both("exec-fails", out, sizeof out), 5);
    dumps = load_all_dumps(&count);
    assert_int_equal(count, 1);
    assert_string_equal(json_string_value(json_object_get(dumps[0], "reason")), "exit");
    free_dumps(dumps, count);
    remove_dir();
}

/* A pattern without %p: each process of a shell pipeline keeps its own file (the pid goes in
 * before the extension), none overwritten. */
static void test_one_file_per_process(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {"/bin/bash", "-c", "seq 3 >/dev/null; ls / >/dev/null; true", NULL};
    struct captured_run run = {.argv = argv, .preload = true, .out_name = "nop.json"};
    char out[4096];
    assert_int_equal(run_captured(&run, out, sizeof out), 0);
    size_t count;
    json_t **dumps = load_all_dumps(&count);
    bool bash_exit = false, seq = false, ls = false;
    for (size_t i = 0; i < count; i++) {
        const char *exe = str_at(dumps[i], "process", "exe");
        const char *reason = json_string_value(json_object_get(dumps[i], "reason"));
        bash_exit |= strstr(exe, "bash") && strcmp(reason, "exit") == 0 &&
                     num(dumps[i], "process.ppid") == getpid();
        seq |= strstr(exe, "/seq") != NULL;
        ls |= strstr(exe, "/ls") != NULL;
        /* Every image's dump is its own: no two dumps of the same pid and start. */
        for (size_t k = 0; k < i; k++)
            assert_false(num(dumps[i], "process.pid") == num(dumps[k], "process.pid") &&
                         num(dumps[i], "process.start_time_ns") ==
                             num(dumps[k], "process.start_time_ns"));
    }
    assert_true(bash_exit && seq && ls);
    char plain[400];
    snprintf(plain, sizeof plain, "%s/nop.json", dump_dir);
    assert_int_equal(access(plain, F_OK), 0);
    free_dumps(dumps, count);
    remove_dir();
}

/* A dump file older than the process is a left-over of an earlier run and is replaced; a
 * relative QAUDIT_OUT is resolved at start-up, so a program that changes directory still writes
 * where it was asked to. */
static void test_left_overs_replaced_and_relative_paths_kept(void **state)
{
    (void)state;
    fresh_dir();
    char old[400];
    snprintf(old, sizeof old, "%s/same.json", dump_dir);
    FILE *f = fopen(old, "w");
    assert_non_null(f);
    fputs("{\"format\": \"qaudit-alloc/1\"}\n", f);
    fclose(f);
    struct timespec hour_ago[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    assert_int_equal(utimensat(AT_FDCWD, old, hour_ago, 0), 0);
    const char *argv[] = {"/bin/bash", "-c", "cd /; x=abc$PWD; exit 0", NULL};
    struct captured_run run = {.argv = argv,
                               .preload = true,
                               .out_name = "same.json",
                               .out_relative = true,
                               .dir = dump_dir};
    char out[4096];
    assert_int_equal(run_captured(&run, out, sizeof out), 0);
    size_t count;
    json_t **dumps = load_all_dumps(&count);
    assert_int_equal(count, 1);
    assert_true(num(dumps[0], "totals.allocs") > 0);
    assert_string_equal(json_string_value(json_object_get(dumps[0], "reason")), "exit");
    free_dumps(dumps, count);
    remove_dir();
}

/* libunwind opens a pipe on its first stack and keeps it (fds 3 and 4 in a fresh process): the
 * preload refuses it that pipe, so the program's descriptors are its own in every mode. */
static void test_no_descriptor_of_its_own_in_any_stack_mode(void **state)
{
    (void)state;
    const char *argv[] = {"/bin/bash", "-c",
                          "for i in 1 2 3; do x=$x$i; done; cd /proc/$$/fd && echo *", NULL};
    char native_out[4096], out[4096];
    struct captured_run native = {.argv = argv};
    assert_int_equal(run_captured(&native, native_out, sizeof native_out), 0);
    static const char *const modes[] = {"QAUDIT_STACKS=off", "QAUDIT_STACKS=sampled:1",
                                        "QAUDIT_STACKS=always", "QAUDIT_STACKS=fp",
                                        "QAUDIT_STACKS=queue"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        fresh_dir();
        const char *extra[] = {modes[i], NULL};
        struct captured_run run = {.argv = argv, .extra = extra, .preload = true};
        assert_int_equal(run_captured(&run, out, sizeof out), 0);
        if (strcmp(out, native_out) != 0)
            fail_msg("%s: descriptors %s, natively %s", modes[i], out, native_out);
        remove_dir();
    }
}

/* The preload's line on stderr ("cannot write the dump") must not kill a program whose stderr is
 * a pipe nobody reads any more: SIGPIPE is blocked around the write and taken back. */
static void test_a_closed_stderr_pipe_kills_nothing(void **state)
{
    (void)state;
    pid_t pid = fork();
    if (pid == 0) {
        int fds[2];
        if (pipe(fds) != 0)
            _exit(126);
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        setenv("LD_PRELOAD", test_preload_path(), 1);
        setenv("QAUDIT_OUT", "/nonexistent/dir/x.json", 1);
        setenv("QAUDIT_FALLBACK_DIR", "/nonexistent/fallback", 1); /* nothing written anywhere */
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    assert_int_equal(wait_exit(pid), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_ending_leaves_its_dump),
        cmocka_unit_test(test_dispositions_read_back_as_set),
        cmocka_unit_test(test_vfork_child_writes_none),
        cmocka_unit_test(test_frees_in_library_destructors_are_counted),
        cmocka_unit_test(test_main_thread_pthread_exit_ends_with_the_last_thread),
        cmocka_unit_test(test_exec_keeps_both_images),
        cmocka_unit_test(test_one_file_per_process),
        cmocka_unit_test(test_left_overs_replaced_and_relative_paths_kept),
        cmocka_unit_test(test_no_descriptor_of_its_own_in_any_stack_mode),
        cmocka_unit_test(test_a_closed_stderr_pipe_kills_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
