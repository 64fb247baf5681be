/* The server's wall clock in milliseconds: connection ages, INFO's uptime and key expiry all read
 * it, so it sits apart from the files that use it. */
#include <time.h>

#include "server.h"

int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
