/* SPDX-License-Identifier: BSD-3-Clause */
/* Privacy accounting: sampling objects, events, per-node ledgers, accountants
 * (RDP, exact analytic Gaussian, zCDP, pure-DP), calibration, the budget guard
 * and the papers' own bounds. See docs/privacy.md.
 *
 * The flow: an algorithm draws its participants with a dpdo_sampling object,
 * describes each release as a dpdo_event built from that same sampling object
 * (mechanism, sensitivity, noise), and charges it to a dpdo_ledger for the
 * nodes whose data it touched. dpdo_accountant handles borrow a ledger and
 * answer epsilon(delta), delta(epsilon) and would_exceed. Accountants never
 * know which algorithm produced the events.
 *
 * Units: `sensitivity` is the L2 (Gaussian) or L1 (Laplace) sensitivity of the
 * released quantity under the neighbouring relation of the sampling scheme
 * (add/remove-one for Poisson and none, replace-one for without-replacement);
 * `noise` is the Gaussian standard deviation or the Laplace scale b. All
 * logarithms are natural.
 *
 * Thread-safety: handles have no locks; use each from one thread at a time
 * (an accountant query writes the accountant's cache; a ledger charge writes
 * the ledger, so accountants reading it must not run concurrently with it).
 * Type objects, dpdo_*_type_* lookups and the pure formula functions are safe
 * from any thread. Every declaration says since which release it exists. */
#ifndef DPDO_ACCOUNTANT_H
#define DPDO_ACCOUNTANT_H

#include "export.h"
#include "rng.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: sampling and event objects (a host's own mechanisms and accounting) ==== */

/* ---- sampling objects ----------------------------------------------------- */

/* Sampling kinds (pinned values). */
enum {
    DPDO_SAMPLING_NONE = 0,    /* every item participates */
    DPDO_SAMPLING_POISSON = 1, /* each item independently with probability q */
    DPDO_SAMPLING_WOR = 2      /* a uniform m-subset of n items (without replacement) */
};

typedef struct dpdo_sampling dpdo_sampling;

/* Create a sampling object of kind NONE. Change it with the set_* calls.
 * Returns DPDO_OK, DPDO_E_INVAL (out NULL), DPDO_E_NOMEM; *out is NULL on
 * failure. Thread-safety: a sampling object may be read (draw, events) from
 * many threads while nobody sets it (a failing draw writes its errmsg). Since 0.1. */
DPDO_API int dpdo_sampling_create(dpdo_sampling **out);
/* Destroy; NULL is a no-op. Events built from it keep their own copy. Since 0.1. */
DPDO_API void dpdo_sampling_destroy(dpdo_sampling *s);
/* Last error message on this handle ("" if none; "dpdo_sampling_errmsg: s is NULL" for NULL).
 * Since 0.1. */
DPDO_API const char *dpdo_sampling_errmsg(const dpdo_sampling *s);
/* Make it "no sampling". Returns DPDO_OK or DPDO_E_INVAL (NULL). Since 0.1. */
DPDO_API int dpdo_sampling_set_none(dpdo_sampling *s);
/* Poisson sampling with rate q in (0, 1] (add/remove-one neighbours).
 * Returns DPDO_OK, DPDO_E_INVAL (NULL, q NaN or outside (0,1]); on failure the
 * object is unchanged. Since 0.1. */
DPDO_API int dpdo_sampling_set_poisson(dpdo_sampling *s, double q);
/* Uniform subset of m out of n items without replacement, 1 <= m <= n
 * (replace-one neighbours; sampling ratio m/n). Returns DPDO_OK or
 * DPDO_E_INVAL; on failure the object is unchanged. Since 0.1. */
DPDO_API int dpdo_sampling_set_wor(dpdo_sampling *s, int64_t n, int64_t m);
/* DPDO_SAMPLING_* kind, or -1 for NULL. Since 0.1. */
DPDO_API int dpdo_sampling_kind(const dpdo_sampling *s);
/* Sampling rate: q (Poisson), m/n (WOR), 1 (none); NaN for NULL. Since 0.1. */
DPDO_API double dpdo_sampling_rate(const dpdo_sampling *s);
/* Draw the participants of one round from stream (node, round, purpose) of
 * rng: writes the chosen indices of {0..n-1}, ascending, into out[] (capacity
 * n) and their number into *len. NONE writes 0..n-1; POISSON keeps each
 * index with probability q (dpdo__stream_bernoulli); WOR requires n equal to
 * the object's n and draws a uniform m-subset (dpdo__stream_subset). This is
 * the very function the algorithms use, so an event built from this object
 * describes exactly the scheme that ran. Returns DPDO_OK, DPDO_E_INVAL (NULL
 * pointers, n < 0, n differs from the WOR population), DPDO_E_CALLBACK
 * (custom RNG failed). Thread-safety: concurrent draws are safe. Since 0.1. */
DPDO_API int dpdo_sampling_draw(const dpdo_sampling *s, const dpdo_rng *rng, uint64_t node,
                                uint64_t round, uint32_t purpose, int64_t n, int64_t *out,
                                int64_t *len);

/* ---- events --------------------------------------------------------------- */

/* Mechanisms (pinned values). The discrete ones add integer multiples of a
 * power-of-two grid to a value rounded to that grid (secure noise,
 * docs/privacy.md); their sensitivity includes the rounding. GAUSSIAN,
 * LAPLACE: Since 0.1. DISCRETE_*: Since 0.2. */
enum {
    DPDO_MECH_GAUSSIAN = 1,
    DPDO_MECH_LAPLACE = 2,
    DPDO_MECH_DISCRETE_GAUSSIAN = 3,
    DPDO_MECH_DISCRETE_LAPLACE = 4,
    DPDO_MECH_DISCRETE_GAUSSIAN_FINE = 5
};
/* DPDO_MECH_DISCRETE_GAUSSIAN_FINE: a discrete Gaussian release as
 * DPDO_MECH_DISCRETE_GAUSSIAN whose noise has at least 2^12 sqrt(d) grid steps
 * per coordinate (S^2 >= 2^24 d for d coordinates): the engine's secure
 * releases. rdp, zcdp and pure charge it as DPDO_MECH_DISCRETE_GAUSSIAN; the
 * pld accountant (and auto) charge it through the continuous Gaussian's PLD
 * with a proven per-release epsilon shift and a tiny extra delta
 * (docs/privacy.md, "A PLD for the lattice Gaussian"); from 0.3 on the
 * exact accountant composes unsampled ones as continuous
 * Gaussians, exactly, with the same shift and delta. Events of this kind come
 * from the engine (or from a ledger file); there is no public setter. Since 0.2. */

typedef struct dpdo_event dpdo_event;

/* Create an unset event. Returns DPDO_OK, DPDO_E_INVAL (out NULL),
 * DPDO_E_NOMEM; *out NULL on failure. Since 0.1. */
DPDO_API int dpdo_event_create(dpdo_event **out);
DPDO_API void dpdo_event_destroy(dpdo_event *ev); /* NULL is a no-op */
DPDO_API const char *dpdo_event_errmsg(const dpdo_event *ev);
/* Describe one release of a Gaussian mechanism with L2 sensitivity `sensitivity`
 * > 0 and noise standard deviation `sigma` > 0 (both finite), applied to the
 * participants chosen by `sampling` (NULL means no sampling). The sampling
 * object's current scheme is copied into the event. Returns DPDO_OK or
 * DPDO_E_INVAL (message names the argument); on failure the event is
 * unchanged. Since 0.1. */
DPDO_API int dpdo_event_set_gaussian(dpdo_event *ev, const dpdo_sampling *sampling,
                                     double sensitivity, double sigma);
/* Same for a Laplace mechanism with L1 sensitivity and scale b > 0. Since 0.1. */
DPDO_API int dpdo_event_set_laplace(dpdo_event *ev, const dpdo_sampling *sampling,
                                    double sensitivity, double scale);
/* A discrete Gaussian release (secure noise, docs/privacy.md): the value rounded
 * to a power-of-two grid gamma plus gamma Z, Z ~ N_Z(0, (sigma/gamma)^2) exactly.
 * `sensitivity` is the L2 sensitivity of the ROUNDED value (e.g. Delta +
 * gamma sqrt(d)); `sigma` the noise's scale parameter. Unsampled it is
 * (sensitivity^2 / (2 sigma^2))-zCDP, RDP(alpha) <= alpha sens^2/(2 sigma^2)
 * (Canonne, Kamath, Steinke 2020, Theorem 14); WOR sampling uses the generic
 * bound over that curve; Poisson sampling is charged without amplification
 * (no proven Gaussian-specific bound for the discrete mechanism); the exact
 * accountant refuses it. Same returns as dpdo_event_set_gaussian. Thread-safe
 * for distinct events. Since 0.2. */
DPDO_API int dpdo_event_set_discrete_gaussian(dpdo_event *ev, const dpdo_sampling *sampling,
                                              double sensitivity, double sigma);
/* A discrete Laplace release, P(Z = z) ~ exp(-|z| gamma / scale) on the grid:
 * pure epsilon = sensitivity / scale with the L1 sensitivity of the rounded
 * value (Delta_1 + gamma d). Same returns. Since 0.2. */
DPDO_API int dpdo_event_set_discrete_laplace(dpdo_event *ev, const dpdo_sampling *sampling,
                                             double sensitivity, double scale);

/* ==== CORE ZONE: ledgers (the privacy record of a run) ==== */

/* ---- ledgers -------------------------------------------------------------- */

typedef struct dpdo_ledger dpdo_ledger;

/* A ledger over n_nodes >= 1 nodes: for every node, how many times each
 * distinct event was charged. Self-composition is stored as a count, so a
 * homogeneous run of T rounds costs O(1) memory and O(#orders) to query.
 * Returns DPDO_OK, DPDO_E_INVAL (out NULL, n_nodes < 1 or > 2^31),
 * DPDO_E_NOMEM; *out NULL on failure. Since 0.1. */
DPDO_API int dpdo_ledger_create(dpdo_ledger **out, int64_t n_nodes);
/* Destroy; NULL is a no-op. If accountants still borrow the ledger the free
 * is deferred: they keep reading it, and it is freed when the last of them is
 * destroyed (the caller must not use `l` any more; docs/abi.md, "Destroying a
 * borrowed handle"). Since 0.1. Deferred (was: refused): Since 0.2. */
DPDO_API void dpdo_ledger_destroy(dpdo_ledger *l);
DPDO_API const char *dpdo_ledger_errmsg(const dpdo_ledger *l);
DPDO_API int64_t dpdo_ledger_nodes(const dpdo_ledger *l);  /* 0 for NULL */
DPDO_API int64_t dpdo_ledger_events(const dpdo_ledger *l); /* distinct events; 0 for NULL */
/* Total charges of node `node` (sum of counts, saturating at INT64_MAX); -1 for bad arguments.
 * Since 0.1. */
DPDO_API int64_t dpdo_ledger_charges(const dpdo_ledger *l, int64_t node);
/* Charge `count` >= 1 repetitions of `ev` to each node in nodes[0..n_sel-1]
 * (nodes NULL and n_sel = -1: every node). Node indices must be distinct and
 * in [0, n_nodes). Charging an event already known only adds to a counter
 * (no allocation). Returns DPDO_OK, DPDO_E_INVAL (NULL, unset event, count
 * < 1, bad or repeated node, counter overflow), DPDO_E_NOMEM; on failure the
 * ledger is unchanged. Since 0.1. */
DPDO_API int dpdo_ledger_charge(dpdo_ledger *l, const dpdo_event *ev, int64_t count,
                                const int64_t *nodes, int64_t n_sel);
/* Forget every charge. Returns DPDO_OK or DPDO_E_INVAL. Since 0.1. */
DPDO_API int dpdo_ledger_reset(dpdo_ledger *l);
/* Serialise the ledger to text ("dpdo-ledger 1" header, exact hex-float
 * values, a checksum line). Sets *len to the full length (without the NUL).
 * With buf NULL nothing is written (size query, DPDO_OK). Otherwise the text
 * and a NUL are written if cap > *len, else DPDO_E_INVAL. Since 0.1. */
DPDO_API int dpdo_ledger_save(const dpdo_ledger *l, char *buf, int64_t cap, int64_t *len);
/* Replace the ledger's content by a serialised state (len bytes of text).
 * The node count must match. Corrupt, truncated, wrong-version or
 * inconsistent input gives DPDO_E_FORMAT (line named in the message) or
 * DPDO_E_VERSION (unknown version tag) and leaves the ledger unchanged. Since 0.1. */
DPDO_API int dpdo_ledger_load(dpdo_ledger *l, const char *buf, int64_t len);

/* ==== ADVANCED ZONE: ledger keys and sequence numbers (tamper evidence) ==== */

/* Authenticate the ledger's saved text with `key` (len in [16, 64] bytes,
 * copied; NULL with len 0 removes the key). While a key is set,
 * dpdo_ledger_save writes format 2: a run identifier (16 random bytes drawn
 * here), a sequence number (the count of changes: charges, discharges,
 * resets, loads) and a keyed BLAKE2b-256 MAC over the whole text instead of
 * the plain checksum; dpdo_ledger_load then refuses (DPDO_E_FORMAT, the
 * message names the problem) an unauthenticated file, a truncated one (no MAC
 * line), an edited one or one written under another key (MAC mismatch), and,
 * unless this ledger is pristine (nothing charged or loaded yet: it then
 * adopts the file's run), a file of another run ("foreign ledger") or an
 * older sequence of the same run ("stale ledger"). Returns DPDO_OK,
 * DPDO_E_INVAL (NULL ledger, bad length), DPDO_E_UNSUPPORTED (libsodium
 * cannot be initialised). Not thread-safe on one ledger. Since 0.2. */
DPDO_API int dpdo_ledger_set_key(dpdo_ledger *l, const unsigned char *key, size_t len);
/* Anti-rollback across restarts (docs/checkpoint.md "Rollback"). The run
 * identifier (16 bytes into run, may be NULL) and the sequence number that an
 * authenticated dpdo_ledger_save writes now; the host persists them somewhere
 * a rollback of the ledger file cannot reach (a monotonic counter, another
 * machine). Returns DPDO_OK, DPDO_E_INVAL (NULL l or seq), DPDO_E_STATE (no
 * key set: a plain ledger has neither). Since 0.3. */
DPDO_API int dpdo_ledger_sequence(const dpdo_ledger *l, unsigned char *run, uint64_t *seq);
/* After a restart: every later dpdo_ledger_load must be an authenticated file
 * of run run[16] with sequence >= min_seq, even into a pristine ledger
 * (DPDO_E_FORMAT "stale ledger" / "foreign ledger" / "not authenticated"
 * otherwise). run NULL removes the pin. Returns DPDO_OK, DPDO_E_INVAL (NULL
 * l). Not thread-safe on one ledger (DPDO_E_MISUSE when busy). Since 0.3. */
DPDO_API int dpdo_ledger_set_min_sequence(dpdo_ledger *l, const unsigned char *run,
                                          uint64_t min_seq);

/* ==== CORE ZONE: accountants by name, and their figures (user accountant types: advanced) ==== */

/* ---- accountants ---------------------------------------------------------- */

/* Columns of one row of the event table passed to accountant callbacks. */
enum {
    DPDO_EV_MECH = 0,     /* DPDO_MECH_* */
    DPDO_EV_SAMPLING = 1, /* DPDO_SAMPLING_* */
    DPDO_EV_RATE = 2,     /* q, or m/n, or 1 */
    DPDO_EV_N = 3,        /* WOR population n (0 otherwise) */
    DPDO_EV_M = 4,        /* WOR subset size m (0 otherwise) */
    DPDO_EV_SENS = 5,     /* sensitivity */
    DPDO_EV_NOISE = 6,    /* sigma or Laplace scale */
    DPDO_EV_COUNT = 7,    /* repetitions charged to this node (may be 0) */
    DPDO_EV_FIELDS = 8
};

/* Conversion methods (accountant option `conversion`). */
enum {
    DPDO_CONVERSION_IMPROVED = 0, /* Balle et al. 2020 / Canonne-Kamath-Steinke 2020 */
    DPDO_CONVERSION_CLASSIC = 1   /* eps = r + log(1/delta)/(alpha-1) (Mironov 2017) */
};

/* An accountant type. Built-ins: "rdp", "exact" (analytic Gaussian, Balle &
 * Wang 2018), "zcdp", "pure", "pld" (privacy loss distributions: Gaussian and
 * Laplace releases, Poisson, without-replacement or no sampling; Since 0.2.)
 * and "auto" (the smallest epsilon among rdp, exact and pld, each where it
 * applies; Since 0.2.; the recommended default). User types fill this struct.
 * `epsilon` (required): for the composition of the events of one node
 * (events: n_events rows of DPDO_EV_FIELDS doubles), the smallest epsilon it
 * can certify at `delta`; *order gets the optimal order or NaN. Return 0 or a
 * non-zero code (reported as DPDO_E_CALLBACK). Rows with count 0 must be
 * ignored. `delta` (optional): delta at `epsilon`. `release` (optional): runs
 * at dpdo_accountant_destroy. */
typedef struct dpdo_accountant_type {
    size_t struct_size;
    const char *name;
    int (*epsilon)(void *user, const double *events, int64_t n_events, double delta, double *eps,
                   double *order);
    int (*delta)(void *user, const double *events, int64_t n_events, double eps, double *delta);
    void (*release)(void *user);
} dpdo_accountant_type;

/* The library's default accountant, by name: "auto", the smallest of the certified figures of
 * rdp, exact and pld (docs/privacy.md, "Which accountant"). A host without a reason to choose
 * another passes dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT) to dpdo_accountant_create;
 * there is no implicit default (a NULL type is refused with a message naming this one).
 * Since 0.3. */
#define DPDO_ACCOUNTANT_DEFAULT "auto"

/* Built-in types by name ("rdp", "exact", "zcdp", "pure", "pld", "auto"); NULL if unknown.
 * List with dpdo_accountant_type_next(NULL), ...(prev) until NULL. Since 0.1. */
DPDO_API const dpdo_accountant_type *dpdo_accountant_type_find(const char *name);
DPDO_API const dpdo_accountant_type *dpdo_accountant_type_next(const dpdo_accountant_type *prev);
DPDO_API const char *dpdo_accountant_type_name(const dpdo_accountant_type *type);

typedef struct dpdo_accountant_options {
    size_t struct_size;   /* sizeof(dpdo_accountant_options) */
    const double *orders; /* RDP orders (> 1, <= 1e6, or +inf); NULL = default grid. Copied. */
    int64_t n_orders;     /* length of orders (1..100000) */
    int32_t conversion;   /* DPDO_CONVERSION_*; default IMPROVED (rdp and zcdp) */
    int32_t reserved0;    /* must be 0 */
    /* Since 0.2. Discretisation interval of the privacy loss (pld and auto),
     * in [1e-6, 1]; default DPDO_PLD_DEFAULT_INTERVAL. Smaller: tighter upper
     * bound and narrower [lower, upper] interval, more time and memory. */
    double pld_interval;
    int64_t reserved[4]; /* must be 0 (set by _init): room for later fields (docs/abi.md). 0.2 */
} dpdo_accountant_options;

/* Default pld_interval. Since 0.2. */
#define DPDO_PLD_DEFAULT_INTERVAL 1e-3

/* Fill defaults: default orders (the 156-order grid 1.1,1.2,...,10.9, 11..63,
 * 128, 256, 512, 1024), improved conversion, pld_interval
 * DPDO_PLD_DEFAULT_INTERVAL. Returns DPDO_OK, DPDO_E_INVAL (o NULL),
 * DPDO_E_VERSION (struct_size < sizeof(size_t)); any older (smaller) or newer
 * (larger) struct_size is accepted (docs/abi.md, "Options structs"). Since 0.1. */
DPDO_API int dpdo_accountant_options_init(dpdo_accountant_options *o, size_t struct_size);

/* The default order grid: writes min(cap, 156) orders into out and returns
 * the grid length (156). out may be NULL. Since 0.1. */
DPDO_API int64_t dpdo_accountant_default_orders(double *out, int64_t cap);

typedef struct dpdo_accountant dpdo_accountant;

/* Create an accountant reading `ledger` (borrowed: it must outlive the
 * accountant) in *out (NULL on failure), the one create shape of every
 * pluggable type: (out, type, user, ...). Built-in type: `user` must be NULL;
 * opts NULL = defaults, copied. User type (borrowed, immutable): `user` is
 * passed to its callbacks, and its ownership moves to the handle on success
 * only (type->release runs at destroy, never on a failed create); opts is
 * checked for its version and otherwise unused. Returns DPDO_OK, DPDO_E_INVAL
 * (NULL out/type/ledger, user for a built-in, bad orders, a user type without
 * name or epsilon), DPDO_E_VERSION (opts, or the user type's struct_size does
 * not cover release), DPDO_E_NOMEM; the message of a failure is left in
 * dpdo_ledger_errmsg(ledger). Since 0.1. `user` parameter: Since 0.2. */
DPDO_API int dpdo_accountant_create(dpdo_accountant **out, const dpdo_accountant_type *type,
                                    void *user, dpdo_ledger *ledger,
                                    const dpdo_accountant_options *opts);
/* Deprecated in 0.2 (kept for the ABI): dpdo_accountant_create(out, type,
 * user, ledger, NULL) for a user type. Since 0.1. */
DPDO_API int dpdo_accountant_create_custom(dpdo_accountant **out, const dpdo_accountant_type *type,
                                           void *user, dpdo_ledger *ledger);
DPDO_API void dpdo_accountant_destroy(dpdo_accountant *acc); /* NULL is a no-op */
DPDO_API const char *dpdo_accountant_errmsg(const dpdo_accountant *acc);
/* Name of the accountant's type ("" for NULL). Since 0.1. */
DPDO_API const char *dpdo_accountant_name(const dpdo_accountant *acc);

/* Smallest epsilon certified at delta in (0,1) for node `node` (node = -1:
 * worst case over all nodes). *order (may be NULL) gets the optimal RDP order
 * (NaN for accountants without orders). Returns DPDO_OK, DPDO_E_INVAL (NULL,
 * delta outside (0,1), bad node), DPDO_E_UNSUPPORTED (this accountant cannot
 * account an event in the ledger, e.g. "exact" with a sampled event; the
 * message says which), DPDO_E_CALLBACK. *eps may be +inf (no finite bound). Since 0.1. */
DPDO_API int dpdo_accountant_epsilon(dpdo_accountant *acc, int64_t node, double delta, double *eps,
                                     double *order);
/* Smallest delta certified at epsilon >= 0 (node as above). Same codes. Since 0.1. */
DPDO_API int dpdo_accountant_delta(dpdo_accountant *acc, int64_t node, double eps, double *delta);

/* The epsilon of dpdo_accountant_epsilon (*eps_hi, the certified upper
 * bound) together with a lower bound *eps_lo of the epsilon of the same
 * events (node = -1: of the worst node): the true epsilon of the dominating
 * pairs lies in [*eps_lo, *eps_hi]. pld: the discretisation error interval
 * (Hoeffding bound on the rounding, docs/privacy.md); exact: both equal; auto:
 * the pld or exact interval when one of them is computed, else 0; rdp, zcdp,
 * pure and user types: 0 (no lower bound known). Same return codes as
 * dpdo_accountant_epsilon. Since 0.2. */
DPDO_API int dpdo_accountant_epsilon_bounds(dpdo_accountant *acc, int64_t node, double delta,
                                            double *eps_lo, double *eps_hi);
/* Which accountant produced the last answer of acc ("rdp", "exact", "pld",
 * ...; for "auto" the one whose figure was smallest at the worst node; the
 * type name before any query). For would_exceed under "auto", an RDP figure
 * already within the budget is returned as is (source "rdp"). Owned by acc,
 * valid until the next query; "" for NULL. Since 0.2. */
DPDO_API const char *dpdo_accountant_source(const dpdo_accountant *acc);

/* Budget guard: refuse anything that would make some node's epsilon at
 * `delta` exceed max_epsilon > 0. Returns DPDO_OK or DPDO_E_INVAL. Since 0.1. */
DPDO_API int dpdo_accountant_set_budget(dpdo_accountant *acc, double max_epsilon, double delta);
/* Would charging `count` repetitions of ev to the nodes in nodes[0..n_sel-1]
 * (NULL, -1: all nodes) push any of them above the budget? *exceed = 1 or 0;
 * *eps_after (may be NULL) = the worst epsilon of those nodes afterwards. The
 * ledger is not changed. Returns DPDO_OK, DPDO_E_STATE (no budget set),
 * DPDO_E_INVAL, DPDO_E_UNSUPPORTED, DPDO_E_CALLBACK. Since 0.1. */
DPDO_API int dpdo_accountant_would_exceed(dpdo_accountant *acc, const dpdo_event *ev, int64_t count,
                                          const int64_t *nodes, int64_t n_sel, int32_t *exceed,
                                          double *eps_after);

/* Calibration, on top of what the ledger already holds (worst node), for
 * `steps` more releases of a Gaussian mechanism (sensitivity, sampling) on
 * every node, so that epsilon at delta is <= target epsilon.
 * calibrate_sigma: the smallest sigma, to 1e-10 relative (bracketing, then
 * false position in log sigma with a bisection safeguard; Since 0.2.), but
 * not below 1e-6 * sensitivity: a target met even there gives a sigma within
 * a factor 4 of that floor, checked to meet it.
 * calibrate_steps: the largest number of steps (0 if even one step exceeds)
 * given sigma, capped at 1e15.
 * Return DPDO_OK, DPDO_E_INVAL, DPDO_E_NUMERIC (target unreachable: the
 * message gives the smallest epsilon reachable), DPDO_E_UNSUPPORTED. */
DPDO_API int dpdo_accountant_calibrate_sigma(dpdo_accountant *acc, const dpdo_sampling *sampling,
                                             double sensitivity, double steps, double epsilon,
                                             double delta, double *sigma);
DPDO_API int dpdo_accountant_calibrate_steps(dpdo_accountant *acc, const dpdo_sampling *sampling,
                                             double sensitivity, double sigma, double epsilon,
                                             double delta, double *steps);

/* ==== ADVANCED ZONE: formulas and the papers' own bounds ==== */

/* ---- formulas (pure functions; return DPDO_OK or DPDO_E_INVAL) -------------- */

/* RDP of one Gaussian release with noise multiplier z = sigma/sensitivity at
 * order alpha (> 1, may be +inf) under sampling kind/rate: Poisson(rate)
 * (exact: integer orders in closed form, fractional orders by the series of
 * Mironov-Talwar-Zhang 2019), WOR (rate = m/n; Wang-Balle-Kasiviswanathan
 * 2019 Thm 9 upper bound, replace-one) or none (alpha/(2 z^2)). Since 0.1. */
DPDO_API int dpdo_rdp_gaussian(int sampling_kind, double rate, double z, double alpha, double *rdp);
/* RDP of the Laplace mechanism with scale/sensitivity = lambda (Mironov 2017). Since 0.1. */
DPDO_API int dpdo_rdp_laplace(double lambda, double alpha, double *rdp);
/* RDP curve -> (eps, delta): minimum over the n orders; *order optional. Since 0.1. */
DPDO_API int dpdo_rdp_to_epsilon(const double *orders, const double *rdp, int64_t n, double delta,
                                 int conversion, double *eps, double *order);
DPDO_API int dpdo_rdp_to_delta(const double *orders, const double *rdp, int64_t n, double eps,
                               int conversion, double *delta, double *order);
/* Analytic Gaussian mechanism (Balle & Wang 2018) with mu = sensitivity/sigma
 * (for k composed Gaussians mu = sqrt(sum (Delta_i/sigma_i)^2)):
 * delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), and its inverse
 * eps(delta) by bisection (1e-12 relative). Since 0.1. */
DPDO_API int dpdo_gaussian_delta(double mu, double eps, double *delta);
DPDO_API int dpdo_gaussian_epsilon(double mu, double delta, double *eps);
/* rho-zCDP -> (eps, delta). conversion CLASSIC: rho + 2 sqrt(rho log(1/delta))
 * (Bun-Steinke 2016); IMPROVED: the CKS 2020 conversion optimised over all
 * real orders (never larger than CLASSIC). Since 0.1. */
DPDO_API int dpdo_zcdp_epsilon(double rho, double delta, int conversion, double *eps);
/* Amplification by subsampling of an eps-DP mechanism: log(1 + g (e^eps - 1)). Since 0.1. */
DPDO_API int dpdo_dp_amplify(double eps, double gamma, double *out);
/* Classic Gaussian-mechanism noise multiplier sqrt(2 log(1.25/delta))/eps
 * (Dwork-Roth Thm A.1; needs eps < 1 for the guarantee: larger eps is
 * computed but returns DPDO_OK only for eps in (0,1), else DPDO_E_INVAL). Since 0.1. */
DPDO_API int dpdo_dp_gaussian_sigma(double eps, double delta, double *sigma_over_sens);
/* Advanced composition (Dwork-Rothblum-Vadhan) of k eps0-DP mechanisms:
 * sqrt(2 k log(1/delta')) eps0 + k eps0 (e^eps0 - 1). Since 0.1. */
DPDO_API int dpdo_dp_advanced_composition(double k, double eps0, double delta_prime, double *eps);

/* ---- the papers' own bounds ------------------------------------------------- */

/* Formula objects named after the theorem: "dp-dda-thm1", "do-adp-thm1",
 * "dp-wor-sgd-thm2", "fed-plt-prop4". Each takes named parameters
 * (dpdo_paper_set) and produces named outputs (dpdo_paper_get) exactly as the
 * specs in docs/privacy.md give them. A violated precondition of the theorem
 * (e.g. T below the theorem's minimum) never goes unnoticed: evaluate still
 * computes the outputs (to reproduce the paper) but reports valid = 0 and
 * names every violation in dpdo_paper_violations(). */
typedef struct dpdo_paper_type dpdo_paper_type;
typedef struct dpdo_paper dpdo_paper;

DPDO_API const dpdo_paper_type *dpdo_paper_type_find(const char *name); /* Since 0.1. */
DPDO_API const dpdo_paper_type *dpdo_paper_type_next(const dpdo_paper_type *prev);
DPDO_API const char *dpdo_paper_type_name(const dpdo_paper_type *type);
/* One-line description (theorem, paper). "" for NULL. Since 0.1. */
DPDO_API const char *dpdo_paper_type_title(const dpdo_paper_type *type);
/* Name of parameter i (0-based) or NULL past the end; same for outputs. Since 0.1. */
DPDO_API const char *dpdo_paper_type_param(const dpdo_paper_type *type, int i);
DPDO_API const char *dpdo_paper_type_output(const dpdo_paper_type *type, int i);

/* Create with every parameter at its default (NaN = unset/required).
 * Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_NOMEM; *out NULL on failure. Since 0.1. */
DPDO_API int dpdo_paper_create(dpdo_paper **out, const dpdo_paper_type *type);
DPDO_API void dpdo_paper_destroy(dpdo_paper *p); /* NULL is a no-op */
DPDO_API const char *dpdo_paper_errmsg(const dpdo_paper *p);
/* Set a parameter. Returns DPDO_OK, DPDO_E_INVAL (unknown name, NaN/Inf). Since 0.1. */
DPDO_API int dpdo_paper_set(dpdo_paper *p, const char *name, double value);
/* Evaluate. Returns DPDO_OK (check dpdo_paper_valid), DPDO_E_INVAL (a
 * required parameter is missing or outside the formula's domain). Since 0.1. */
DPDO_API int dpdo_paper_evaluate(dpdo_paper *p);
/* 1 if every precondition of the theorem held at the last evaluate, 0 if
 * not, -1 if not evaluated / NULL. Since 0.1. */
DPDO_API int dpdo_paper_valid(const dpdo_paper *p);
/* "; "-separated list of violated preconditions ("" if none). Never NULL. Since 0.1. */
DPDO_API const char *dpdo_paper_violations(const dpdo_paper *p);
/* Read an output (or a parameter) after evaluate. Returns DPDO_OK,
 * DPDO_E_INVAL (unknown name), DPDO_E_STATE (not evaluated). Since 0.1. */
DPDO_API int dpdo_paper_get(const dpdo_paper *p, const char *name, double *value);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_ACCOUNTANT_H */
