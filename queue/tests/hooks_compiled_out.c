/* Built with QAUDIT_HOOKS=0: the same queue operations, with the hooks compiled out. */
#include "queue/rxq.h"

void drive_queue_with_hooks_compiled_out(void);

void drive_queue_with_hooks_compiled_out(void)
{
    struct rxq q;
    int conn = 0;
    rxq_init(&q);
    qaudit_conn_open(&conn, &q);
    for (uint32_t i = 0; i < 20; i++) {
        struct rx_desc d = {(uint16_t)i, i, 0};
        rxq_push(&q, &d);
    }
    while (rxq_pop(&q, NULL))
        ;
    rxq_clear(&q);
    rxq_destroy(&q);
    qaudit_conn_close(&conn, &q);
}
