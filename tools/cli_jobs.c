/* Sweep points on threads: every point is an independent run with its own
 * seed and state, so the results do not depend on how many run at once;
 * the longest start first, and the results are printed in sweep order as
 * they become ready. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

unsigned cli_job_count(uint64_t requested, size_t npoints)
{
    unsigned jobs = requested > 256 ? 256 : (unsigned)requested;
    if (jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n > 0 ? (unsigned)n : 1;
    }
    if (jobs > npoints)
        jobs = (unsigned)npoints;
    if (jobs > 256)
        jobs = 256;
    return jobs ? jobs : 1;
}

struct pool {
    const struct cli_jobs *j;
    const size_t *order;     /* points in the order they start */
    size_t next, finished;
    unsigned char *done;     /* [n] */
    pthread_mutex_t lock;
};

static void *worker(void *arg)
{
    struct pool *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        size_t k = pl->next < pl->j->n ? pl->next++ : pl->j->n;
        pthread_mutex_unlock(&pl->lock);
        if (k == pl->j->n)
            return NULL;
        size_t i = pl->order[k];
        pl->j->run(pl->j->ctx, i);
        pthread_mutex_lock(&pl->lock);
        pl->done[i] = 1;
        pl->finished++;
        pthread_mutex_unlock(&pl->lock);
    }
}

/* Wait for point i, showing how far the sweep is. */
static void wait_point(struct pool *pl, size_t i, unsigned started)
{
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        bool done = pl->done[i];
        size_t finished = pl->finished;
        pthread_mutex_unlock(&pl->lock);
        if (done)
            return;
        if (pl->j->progress || isatty(2)) {
            char extra[80];
            snprintf(extra, sizeof extra, "%zu of %zu points done, %u jobs", finished,
                     pl->j->n, started);
            cli_progress("sweep", (double)finished / (double)pl->j->n, extra,
                         pl->j->progress);
        }
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

struct ranked {
    double cost;
    size_t i;
};

static int by_cost(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The order the points start in: the costliest first, ties in sweep order. */
static size_t *start_order(const struct cli_jobs *j)
{
    size_t *order = malloc(j->n * sizeof *order);
    struct ranked *rk = malloc(j->n * sizeof *rk);
    if (!order || !rk) {
        free(order);
        free(rk);
        return NULL;
    }
    for (size_t i = 0; i < j->n; i++)
        rk[i] = (struct ranked){ j->cost ? j->cost[i] : 0, i };
    qsort(rk, j->n, sizeof *rk, by_cost);
    for (size_t i = 0; i < j->n; i++)
        order[i] = rk[i].i;
    free(rk);
    return order;
}

int cli_jobs_run(const struct cli_jobs *j, unsigned jobs)
{
    if (j->n == 0)
        return 0;
    size_t *order = start_order(j);
    unsigned char *done = calloc(j->n, 1);
    if (!order || !done) {
        fprintf(stderr, "error: out of memory\n");
        free(order);
        free(done);
        return -1;
    }
    struct pool pl = { j, order, 0, 0, done, PTHREAD_MUTEX_INITIALIZER };
    pthread_t th[256];
    unsigned started = 0;
    for (unsigned k = 0; k < jobs && k < 256; k++)
        if (pthread_create(&th[k], NULL, worker, &pl) == 0)
            started++;
    if (started == 0)
        worker(&pl); /* no thread: the points one after the other, here */
    int status = 0;
    for (size_t i = 0; i < j->n; i++) {
        wait_point(&pl, i, started);
        int st = j->print(j->ctx, i);
        status = st > status ? st : status;
    }
    for (unsigned k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    cli_progress_done(j->progress);
    free(order);
    free(done);
    return status;
}
