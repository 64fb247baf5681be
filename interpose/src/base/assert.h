/* Checks of the interposer's own invariants in a -DQA_DEBUG build (never in a release one).
 * Context: any, signal handlers included: the message is written with write(2) from a stack
 * buffer, nothing allocates; then abort(). */
#ifndef QAUDIT_ASSERT_H
#define QAUDIT_ASSERT_H

#ifdef QA_DEBUG
void qa_assert_fail(const char *file, int line, const char *what) __attribute__((noreturn));
#define qa_assert(cond) ((cond) ? (void)0 : qa_assert_fail(__FILE__, __LINE__, #cond))
#else
#define qa_assert(cond) ((void)sizeof(cond)) /* not evaluated: names used, no code */
#endif

#endif
