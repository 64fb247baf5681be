/* Processes that confine themselves still leave their dumps where the run's dumps go, and never
 * in a program's own directory: one that drops to nobody (its dump directory refuses it: the
 * fallback directory, named with the run's id, takes it), one that chroots (the directory is
 * held across the chroot), both, and one exec'd from another working directory under a relative
 * or default QAUDIT_OUT (the absolute pattern travels in the environment). Nothing is said on
 * stderr: nothing was lost. Needs root (CI runs as root). */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

static char fallback[64], jail[64], elsewhere[64];

static int setup(void **state)
{
    (void)state;
    if (geteuid() != 0)
        fail_msg("test_confined needs root: it drops privileges and chroots");
    fresh_dir();
    snprintf(fallback, sizeof fallback, "/tmp/qaudit-fallback-test-XXXXXX");
    snprintf(jail, sizeof jail, "/tmp/qaudit-jail-XXXXXX");
    snprintf(elsewhere, sizeof elsewhere, "/tmp/qaudit-elsewhere-XXXXXX");
    assert_non_null(mkdtemp(fallback));
    assert_non_null(mkdtemp(jail));
    assert_non_null(mkdtemp(elsewhere));
    assert_int_equal(chmod(fallback, 01733), 0); /* as qaudit run makes it: anyone may add */
    return 0;
}

static void empty_and_remove(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[600];
    while (d != NULL && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

static int teardown(void **state)
{
    (void)state;
    empty_and_remove(fallback);
    empty_and_remove(jail);
    empty_and_remove(elsewhere);
    remove_dir();
    return 0;
}

static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Starts the fixture under the preload, its stderr into elsewhere/stderr. */
static pid_t start_confined(const char *how, const char *arg, const char *const *extra)
{
    char err_path[600];
    snprintf(err_path, sizeof err_path, "%s/stderr", elsewhere);
    const char *argv[] = {FIXTURE("fixture_confine"), how, arg, NULL};
    int saved = dup(STDERR_FILENO), err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && err >= 0);
    dup2(err, STDERR_FILENO); /* the fixture inherits it */
    pid_t pid = start(argv, extra);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(err);
    return pid;
}

/* Waits for the fixture's exit 0; its stderr must hold no line of the preload's. */
static void finish_confined(pid_t pid)
{
    char err_path[600];
    snprintf(err_path, sizeof err_path, "%s/stderr", elsewhere);
    assert_int_equal(wait_exit(pid), 0);
    FILE *f = fopen(err_path, "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f))
        if (strncmp(line, "qaudit:", 7) == 0)
            fail_msg("the preload said: %s", line);
    if (f)
        fclose(f);
    unlink(err_path);
}

static pid_t run_confined(const char *how, const char *arg, const char *const *extra)
{
    pid_t pid = start_confined(how, arg, extra);
    finish_confined(pid);
    return pid;
}

static void assert_counted(const char *path, pid_t pid)
{
    json_t *d = load(path);
    assert_int_equal(num(d, "process.pid"), pid);
    assert_true(num(d, "totals.allocs") >= 100);
    json_decref(d);
}

static void test_a_dropped_user_writes_into_the_fallback(void **state)
{
    (void)state;
    char setting[128], path[700];
    snprintf(setting, sizeof setting, "QAUDIT_FALLBACK_DIR=%s", fallback);
    const char *extra[] = {setting, "QAUDIT_RUN_ID=run7", NULL};
    pid_t pid = run_confined("drop-user", NULL, extra);
    assert_int_equal(count_dumps(), 0); /* the dump directory (0700, root's) refused it */
    snprintf(path, sizeof path, "%s/qaudit-fallback-run7-dump-%d.json", fallback, (int)pid);
    assert_counted(path, pid);
    json_t *d = load(path);
    assert_string_equal(str_at(d, "process", "run_id"), "run7");
    json_decref(d);
    unlink(path);
}

/* A report of the run's dumps names the one its dropped child left in the fallback. */
static void test_the_report_names_what_the_fallback_holds(void **state)
{
    (void)state;
    char setting[128], command[1200], path[700], text[8192];
    snprintf(setting, sizeof setting, "QAUDIT_FALLBACK_DIR=%s", fallback);
    const char *extra[] = {setting, "QAUDIT_RUN_ID=run8", NULL};
    run_confined("fork-drop", NULL, extra);
    assert_int_equal(count_dumps(), 1);
    assert_int_equal(files_in(fallback), 1);
    snprintf(path, sizeof path, "%s/report.txt", elsewhere);
    snprintf(command, sizeof command, "%s/qaudit report %s/dump-*.json > %s", SERVER_DIR, dump_dir,
             path);
    assert_int_equal(system(command), 0);
    FILE *f = fopen(path, "r");
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    if (strstr(text, "1 more dump of run run8 is in") == NULL ||
        strstr(text, "qaudit-fallback-run8-dump-") == NULL)
        fail_msg("the report does not name the fallback's dump:\n%.2000s", text);
    unlink(path);
}

/* Without QAUDIT_FALLBACK_DIR the fallback is /tmp, the one documented place (make test sets
 * one for every test: tests/ctest_clean.sh; the fixture starts without it). */
static void test_the_default_fallback_is_tmp(void **state)
{
    (void)state;
    char *set = getenv("QAUDIT_FALLBACK_DIR");
    char *kept = set ? strdup(set) : NULL;
    unsetenv("QAUDIT_FALLBACK_DIR");
    pid_t pid = run_confined("drop-user", NULL, NULL);
    if (kept != NULL)
        setenv("QAUDIT_FALLBACK_DIR", kept, 1);
    free(kept);
    char path[700];
    snprintf(path, sizeof path, "/tmp/qaudit-fallback-dump-%d.json", (int)pid);
    assert_counted(path, pid);
    unlink(path);
}

static void test_a_chrooted_process_writes_into_the_run_directory(void **state)
{
    (void)state;
    pid_t pid = run_confined("chroot", jail, NULL);
    char path[700];
    snprintf(path, sizeof path, "%s/dump-%d.json", dump_dir, (int)pid);
    assert_counted(path, pid);
    assert_int_equal(files_in(jail), 0);
    char command[1000];
    snprintf(command, sizeof command, "%s/qaudit report %s >/dev/null", SERVER_DIR, path);
    assert_int_equal(system(command), 0);
}

/* A dump on request after the chroot: the writer thread writes it, on a descriptor table of its
 * own, through the run directory held on the program's (borrowed for each use). */
static void test_a_chrooted_process_snapshot_lands_in_the_run_directory(void **state)
{
    (void)state;
    pid_t pid = start_confined("chroot-snapshot", jail, NULL);
    char path[700];
    snprintf(path, sizeof path, "%s/dump-%d.snapshot-0.json", dump_dir, (int)pid);
    for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
        usleep(10000);
    kill(pid, SIGUSR1);
    finish_confined(pid);
    assert_counted(path, pid);
    snprintf(path, sizeof path, "%s/dump-%d.json", dump_dir, (int)pid);
    assert_counted(path, pid);
    assert_int_equal(files_in(jail), 0);
}

static void test_chroot_then_drop_writes_into_the_fallback(void **state)
{
    (void)state;
    char setting[128], path[700];
    snprintf(setting, sizeof setting, "QAUDIT_FALLBACK_DIR=%s", fallback);
    const char *extra[] = {setting, NULL};
    pid_t pid = run_confined("chroot-drop", jail, extra);
    snprintf(path, sizeof path, "%s/qaudit-fallback-dump-%d.json", fallback, (int)pid);
    assert_counted(path, pid);
    assert_int_equal(files_in(jail), 0);
    unlink(path);
}

/* A process under a seccomp filter that kills at calls it never makes, among them those the
 * writer thread's own descriptor table takes (close_range, pidfd_open): one installed after
 * start-up (prctl) and a child forked then, one inherited across exec (seen at start-up). Each
 * lives and dumps; the writer stays on the program's table. */
static void test_a_seccomp_filter_is_respected(void **state)
{
    (void)state;
    const char *modes[] = {"seccomp-fork", "seccomp-exec"};
    for (int i = 0; i < 2; i++) {
        pid_t pid = run_confined(modes[i], "", NULL);
        char path[700];
        snprintf(path, sizeof path, "%s/dump-%d.json", dump_dir, (int)pid);
        assert_counted(path, pid);
    }
}

/* A relative QAUDIT_OUT, and none at all (qaudit-%p.json): the exec'd image, whose working
 * directory is elsewhere, writes where the first image was started. */
static void test_an_exec_from_elsewhere_writes_where_the_run_started(void **state)
{
    (void)state;
    static const char *const outs[] = {"QAUDIT_OUT=rel-%p.json", "QAUDIT_OUT="};
    static const char *const names[] = {"rel-%d.json", "qaudit-%d.json"};
    for (size_t i = 0; i < 2; i++) {
        const char *argv[] = {FIXTURE("fixture_confine"), "exec-elsewhere", elsewhere, NULL};
        const char *extra[] = {outs[i], NULL};
        char out[256];
        struct captured_run run = {.argv = argv, .extra = extra, .preload = true, .dir = dump_dir};
        assert_int_equal(run_captured(&run, out, sizeof out), 0);
        assert_int_equal(files_in(elsewhere), 0);
        size_t count;
        json_t **dumps = load_all_dumps(&count);
        assert_int_equal(count, 1);
        char path[700], name[64];
        snprintf(name, sizeof name, names[i], (int)num(dumps[0], "process.pid"));
        snprintf(path, sizeof path, "%s/%s", dump_dir, name);
        assert_int_equal(access(path, R_OK), 0);
        free_dumps(dumps, count);
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_dropped_user_writes_into_the_fallback, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_default_fallback_is_tmp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_report_names_what_the_fallback_holds, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_chrooted_process_writes_into_the_run_directory,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_chrooted_process_snapshot_lands_in_the_run_directory,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_seccomp_filter_is_respected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chroot_then_drop_writes_into_the_fallback, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_exec_from_elsewhere_writes_where_the_run_started,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
