/* Sampled sites scaled to estimates. A dump with `config.stacks` "sampled" keeps a stack for one
 * allocation in N (by count), or one per N bytes (by bytes); its sites count those samples only.
 * Each site's figures are scaled by the weight of one sample, with a range from a 99 % Poisson
 * interval on its number of samples (docs/report-format.md, "How exact each figure is": Sites). */
#include <math.h>

#include "reports_reading.h"

/* The level of the ranges: 99 %, not 95 %: a range that holds 95 times in 100 fails a reader one
 * site in twenty, and a report shows tens of sites. */
#define ALPHA 0.01
#define Z99 2.575829304 /* its two-sided z */

/* P(X <= k) for X ~ Poisson(lambda), by summing its terms (k small, lambda < 700). */
static double poisson_cdf(double k, double lambda)
{
    double term = exp(-lambda), sum = term;
    for (double i = 1; i <= k; i++) {
        term *= lambda / i;
        sum += term;
    }
    return sum;
}

/* The lambda whose P(X <= k) is p (the CDF falls as lambda grows), by bisection. */
static double poisson_solve(double k, double p)
{
    double lo = 0, hi = k + 20 + 10 * sqrt(k);
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;
        if (poisson_cdf(k, mid) > p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* The exact (Garwood) 99 % interval for the mean of a Poisson count k, solved directly up to
 * k = 100; above, Byar's approximation, within 0.1 % of it there. */
void report_poisson_interval(double k, double *low, double *high)
{
    if (k <= 100) {
        *low = k > 0 ? poisson_solve(k - 1, 1 - ALPHA / 2) : 0;
        *high = poisson_solve(k, ALPHA / 2);
        return;
    }
    double c = 1 - 1 / (9 * k) - Z99 / (3 * sqrt(k));
    *low = k * c * c * c;
    double k1 = k + 1;
    c = 1 - 1 / (9 * k1) + Z99 / (3 * sqrt(k1));
    *high = k1 * c * c * c;
}

/* Allocations one sample stands for, given the site's mean sampled size. By count: N. By bytes
 * with exponential intervals (tcmalloc, jemalloc): an allocation of s bytes is sampled with
 * probability 1 - exp(-s/N). By bytes with a fixed countdown (the interposer's today): with
 * probability min(1, s/N). */
double report_sample_weight(const struct report_process *p, double mean_size)
{
    double n = (double)p->sample_every;
    if (p->sampling == SAMPLING_COUNT)
        return n;
    if (mean_size <= 0)
        return 1;
    double chance = p->exponential ? -expm1(-mean_size / n) : fmin(1.0, mean_size / n);
    return chance > 0 ? 1 / chance : 1;
}

static void exact_estimate(struct report_site *s)
{
    s->estimated = false;
    s->est = (struct report_estimate){
        .allocs = (double)s->allocs,
        .allocs_low = (double)s->allocs,
        .allocs_high = (double)s->allocs,
        .bytes = (double)s->bytes,
        .bytes_low = (double)s->bytes,
        .bytes_high = (double)s->bytes,
        .frees = (double)s->frees,
        .live_bytes = (double)s->live_bytes,
        .live_low = (double)s->live_bytes,
        .live_high = (double)s->live_bytes,
        .live_blocks = s->allocs > s->frees ? (double)(s->allocs - s->frees) : 0,
        .peak_live_bytes = (double)s->peak_live_bytes,
        .temporary = (double)s->temporary,
    };
}

/* Under a fixed byte countdown a block of N bytes or more leaves the countdown owing more samples,
 * paid by the allocations right after it, whatever their site: counted so a note says so. */
static bool large_sampled_site(const struct report_process *p, double mean)
{
    return p->sampling == SAMPLING_BYTES && !p->exponential && mean >= (double)p->sample_every;
}

/* A byte-sampled site whose allocations are estimated from its mean sampled size (the dump has
 * no sites[].allocs_estimate): counted so a note says so. */
static bool mean_size_estimate(const struct report_process *p, const struct report_site *s)
{
    return p->sampling == SAMPLING_BYTES && s->allocs_estimate == 0 && s->bytes > 0;
}

static void sampled_estimate(const struct report_process *p, struct report_site *s,
                             struct report *dump)
{
    exact_estimate(s);
    if (s->allocs == 0)
        return;
    double k = (double)s->allocs, mean = (double)s->bytes / k;
    double w = report_sample_weight(p, mean), low, high;
    report_poisson_interval(k, &low, &high);
    s->estimated = true;
    dump->sampled_large_sites += large_sampled_site(p, mean);
    struct report_estimate *e = &s->est;
    /* Allocations per sample: the weight of the mean sampled size, or, better, the sum of each
     * sample's own weight when the dump has it (sites[].allocs_estimate): by bytes, large blocks
     * are sampled more often, so the mean sampled size overstates the site's mean size. */
    double per_sample = s->allocs_estimate > 0 ? s->allocs_estimate / k : w;
    e->allocs = k * per_sample;
    e->allocs_low = low * per_sample;
    e->allocs_high = high * per_sample;
    /* Bytes per sample likewise: each sample's own size times its weight when the dump has it. */
    double bytes_per_sample = s->bytes_estimate > 0 ? s->bytes_estimate / k : mean * w;
    e->bytes = k * bytes_per_sample;
    e->bytes_low = low * bytes_per_sample;
    e->bytes_high = high * bytes_per_sample;
    e->frees *= per_sample;
    e->live_blocks *= per_sample;
    e->temporary *= per_sample;
    e->live_bytes *= w;
    double live = s->allocs > s->frees ? (double)(s->allocs - s->frees) : 0;
    report_poisson_interval(live, &low, &high);
    double live_size =
        live > 0 ? e->live_bytes / live : mean * w; /* bytes a live sample stands for */
    e->live_low = low * live_size;
    e->live_high = high * live_size;
    e->peak_live_bytes *= w;
    dump->mean_size_estimates += mean_size_estimate(p, s);
}

/* A dump that says "sampled" but not whether by count or by bytes (config.sample_by_bytes came
 * later): the hypothesis whose expected number of samples is nearer to the samples taken. */
static enum report_sampling infer_sampling(const struct report *dump)
{
    double samples = 0;
    for (size_t i = 0; i < dump->site_count; i++)
        samples += (double)dump->sites[i].allocs;
    double n = (double)dump->processes[0].sample_every;
    double by_count = (double)(dump->totals.allocs + dump->totals.reallocs) / n;
    double by_bytes = (double)dump->totals.bytes_requested / n;
    if (samples <= 0 || by_count <= 0 || by_bytes <= 0)
        return SAMPLING_COUNT;
    return fabs(log(samples / by_count)) <= fabs(log(samples / by_bytes)) ? SAMPLING_COUNT
                                                                          : SAMPLING_BYTES;
}

void report_estimate_sites(struct report *dump)
{
    struct report_process *p = dump->process_count ? &dump->processes[0] : NULL;
    bool sampled = p != NULL && p->sampling != SAMPLING_NONE && p->sample_every > 0;
    if (sampled && p->sampling_inferred)
        p->sampling = infer_sampling(dump);
    for (size_t i = 0; i < dump->site_count; i++) {
        bool every_one =
            p && p->sample_every == 1 && (p->sampling == SAMPLING_COUNT || !p->exponential);
        if (sampled && !every_one)
            sampled_estimate(p, &dump->sites[i], dump);
        else
            exact_estimate(&dump->sites[i]);
    }
}

void report_estimate_recount(struct report *r)
{
    r->sampled_large_sites = r->mean_size_estimates = 0;
    const struct report_process *p = r->process_count == 1 ? &r->processes[0] : NULL;
    for (size_t i = 0; p != NULL && i < r->site_count; i++) {
        const struct report_site *s = &r->sites[i];
        if (!s->estimated || s->allocs == 0)
            continue;
        r->sampled_large_sites += large_sampled_site(p, (double)s->bytes / (double)s->allocs);
        r->mean_size_estimates += mean_size_estimate(p, s);
    }
}
