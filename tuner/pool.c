/*
 * pool.c - the thread pool: workers take the next job index under a mutex.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "pool.h"

typedef struct pool {
    pthread_mutex_t lock;
    int next, njobs;
    void (*fn)(int, void *);
    void *arg;
} pool;

static void *work(void *arg)
{
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->next < p->njobs ? p->next++ : -1;
        pthread_mutex_unlock(&p->lock);
        if (i < 0)
            return NULL;
        p->fn(i, p->arg);
    }
}

void pool_run(int njobs, int threads, void (*fn)(int i, void *arg), void *arg)
{
    pool p = {PTHREAD_MUTEX_INITIALIZER, 0, njobs, fn, arg};
    if (threads > njobs)
        threads = njobs;
    if (threads < 1)
        threads = 1;
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    int started = 0;
    for (int k = 0; tid && k < threads - 1; k++, started++)
        if (pthread_create(&tid[k], NULL, work, &p) != 0)
            break;
    work(&p);   /* the calling thread works too, so the pool runs even if no thread starts */
    for (int k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    free(tid);
}

int pool_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
