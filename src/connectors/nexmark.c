/*
** nexmark.c — the `nexmark` source: the Nexmark benchmark's event generator.
**
** Owns: the generator model (which event an id is, the ids, prices, names
** and times it carries) and writing its rows straight into the scan's
** vectors.  Does not own: the option checks (plan/connectors.c), the
** computed `dateTime` column and the watermark (plan nodes above the scan).
**
** The model is Nexmark's (GeneratorConfig / NexmarkGenerator): event ids
** count from 0 over all kinds; id % (P+A+B) below P is a person, below P+A an
** auction, else a bid (1:3:46 by default); event time = a fixed base time +
** id × (1 s / rate), in ms; person and auction ids start at 1000 and follow
** the id (the k-th person is 1000+k); sellers and bidders are "hot" three
** times in four, auctions of bids once in two, otherwise recent ones; prices
** are round(10^(6U) × 100); half the bids come from one of four named
** channels; `extra` pads events to about 200 / 500 / 100 bytes.
**
** Every value is a function of (seed, event id, field) alone: a hash of the
** three, not a running random stream.  So any event can be generated on its
** own — a restart at an offset replays exactly, a column the table leaves
** out costs nothing, and each column is filled by its own tight loop over
** the chunk (no per-row dispatch).  Strings are slices of pools built once
** at open from the seed (random text, names, cities, channels and their
** URLs), so no row allocates or formats anything.
**
** Options (the keys are checked by the catalog, the values here).  The
** Nexmark project's own, with their meaning there (NexmarkSourceOptions):
** 'first-event.rate' spaces the event times (1 s / rate apart; default
** 10,000/s) and does not pace: events are made as fast as possible, unless
** 'max-emit-speed' = 'false', which emits each event when its time has come
** in wall time.  'next-event.rate' is accepted and changes nothing, as in
** that generator (one inter-event delay, from the first rate).  'events.num'
** bounds the stream; 0 means no bound.  '{person,auction,bid}.proportion',
** '{person,auction,bid}.avg-size' (the size `extra` pads an event to: "200b",
** "1kb"), 'bid.hot-ratio.auctions', 'bid.hot-ratio.bidders' and
** 'auction.hot-ratio.sellers' (a hot id is chosen with probability
** 1 - 1/ratio).  dipper's own: 'rate' (or 'events-per-second') spaces the
** times and also paces in wall time; 'number-of-events' (0 means 0 events);
** 'seed'.
**
** The table may declare any subset of the columns event_type, person,
** auction, bid (and a physical dateTime), and any subset of each ROW's
** fields in any order, matched by name; anything else is refused at open.
**
** Splits (parallel execution, connector.h): split w of n reads the w-th
** equal share of the ids of each planned batch — an event is a function of
** its id, so a share is generated without the others; a paced table plans
** by the clock and splits only where the plans are replayed (streaming).
*/
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "connectors/connector.h"
#include "core/grow.h"

/* ---- the model's constants (Nexmark's defaults) ---- */

#define FIRST_PERSON_ID 1000
#define FIRST_AUCTION_ID 1000
#define FIRST_CATEGORY_ID 10
#define NUM_CATEGORIES 5
#define ACTIVE_PEOPLE 1000   /* a "recent" person is one of the last 1000 */
#define PERSON_ID_LEAD 10    /* ... or one of the next 10, not yet seen */
#define IN_FLIGHT_AUCTIONS 100
#define AUCTION_ID_LEAD 10
#define HOT_RATIO_100 100    /* hot ids are multiples of 100 */
#define NUM_CHANNELS 10000
#define NUM_HOT_CHANNELS 4
#define DEFAULT_RATE 10000.0 /* events/s of event time when no rate is given */
#define AVG_PERSON_BYTES 200
#define AVG_AUCTION_BYTES 500
#define AVG_BID_BYTES 100
#define MAX_AVG_BYTES 10000  /* the largest '*.avg-size' (extra fits POOL_SLACK) */
/* 2015-07-15 00:00:00 UTC, the base time of Beam's Nexmark: fixed so that a
** seed gives the same events, times included, on every run. */
#define BASE_TIME_MS INT64_C(1436918400000)

#define PRICE_STEPS 4096 /* see price_of */

/* Pools of random text: slices start anywhere in the first POOL_BYTES. */
#define POOL_BYTES (1u << 16)
#define POOL_SLACK 16384u /* > the longest slice (an extra of MAX_AVG_BYTES) */

/* Rows per read(): keeps one chunk's strings far below the 2 GiB offsets. */
#define MAX_CHUNK_ROWS (INT64_C(1) << 16)
/* A micro-batch of an unbounded source with no rate and no cap. */
#define UNCAPPED_BATCH_ROWS (INT64_C(1) << 20)

typedef enum nx_kind { NX_PERSON, NX_AUCTION, NX_BID, NX_ANY } nx_kind;

typedef enum nx_class { NX_INT, NX_STR, NX_TIME } nx_class;

/* The fields the generator produces; also the salt of each field's hash. */
typedef enum nx_field {
  F_EVENT_TYPE = 1,
  F_EVENT_TIME,
  F_P_ID,
  F_P_NAME,
  F_P_EMAIL,
  F_P_CARD,
  F_P_CITY,
  F_P_STATE,
  F_P_TIME,
  F_P_EXTRA,
  F_A_ID,
  F_A_ITEM,
  F_A_DESC,
  F_A_INITIAL,
  F_A_RESERVE,
  F_A_TIME,
  F_A_EXPIRES,
  F_A_SELLER,
  F_A_CATEGORY,
  F_A_EXTRA,
  F_B_AUCTION,
  F_B_BIDDER,
  F_B_PRICE,
  F_B_CHANNEL,
  F_B_URL,
  F_B_TIME,
  F_B_EXTRA,
} nx_field;

typedef struct nx_field_def {
  const char *name;
  nx_kind kind;
  nx_class cls;
  nx_field field;
} nx_field_def;

static const nx_field_def field_defs[] = {
    {"id", NX_PERSON, NX_INT, F_P_ID},
    {"name", NX_PERSON, NX_STR, F_P_NAME},
    {"emailAddress", NX_PERSON, NX_STR, F_P_EMAIL},
    {"creditCard", NX_PERSON, NX_STR, F_P_CARD},
    {"city", NX_PERSON, NX_STR, F_P_CITY},
    {"state", NX_PERSON, NX_STR, F_P_STATE},
    {"dateTime", NX_PERSON, NX_TIME, F_P_TIME},
    {"extra", NX_PERSON, NX_STR, F_P_EXTRA},
    {"id", NX_AUCTION, NX_INT, F_A_ID},
    {"itemName", NX_AUCTION, NX_STR, F_A_ITEM},
    {"description", NX_AUCTION, NX_STR, F_A_DESC},
    {"initialBid", NX_AUCTION, NX_INT, F_A_INITIAL},
    {"reserve", NX_AUCTION, NX_INT, F_A_RESERVE},
    {"dateTime", NX_AUCTION, NX_TIME, F_A_TIME},
    {"expires", NX_AUCTION, NX_TIME, F_A_EXPIRES},
    {"seller", NX_AUCTION, NX_INT, F_A_SELLER},
    {"category", NX_AUCTION, NX_INT, F_A_CATEGORY},
    {"extra", NX_AUCTION, NX_STR, F_A_EXTRA},
    {"auction", NX_BID, NX_INT, F_B_AUCTION},
    {"bidder", NX_BID, NX_INT, F_B_BIDDER},
    {"price", NX_BID, NX_INT, F_B_PRICE},
    {"channel", NX_BID, NX_STR, F_B_CHANNEL},
    {"url", NX_BID, NX_STR, F_B_URL},
    {"dateTime", NX_BID, NX_TIME, F_B_TIME},
    {"extra", NX_BID, NX_STR, F_B_EXTRA},
    /* top-level columns */
    {"event_type", NX_ANY, NX_INT, F_EVENT_TYPE},
    {"dateTime", NX_ANY, NX_TIME, F_EVENT_TIME},
};

#define NFIELD_DEFS (sizeof field_defs / sizeof field_defs[0])

static const char *const kind_names[] = {"person", "auction", "bid"};

static const char *const first_names[] = {"Peter", "Paul",  "Luke", "John",   "Saul",  "Vicky",
                                          "Kate",  "Julie", "Sarah", "Deiter", "Walter"};
static const char *const last_names[] = {"Shultz", "Abrams", "Spencer", "White", "Bartels",
                                         "Walton", "Smith",  "Jones",   "Noris"};
static const char *const cities[] = {"Phoenix",  "Los Angeles", "San Francisco", "Boise",
                                     "Portland", "Bend",        "Redmond",       "Seattle",
                                     "Kent",     "Cheyenne"};
static const char *const states[] = {"AZ", "CA", "ID", "OR", "WA", "WY"};
static const char *const hot_channels[] = {"Google", "Facebook", "Baidu", "Apple"};

#define COUNT(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* ---- state ---- */

/* A list of strings in one buffer. */
typedef struct nx_pool {
  char *buf;
  uint32_t *off, *len;
  uint32_t n, used, cap;
  uint32_t maxlen;
} nx_pool;

/* One column of the scan schema and what fills it. */
typedef struct nx_col {
  nx_kind row_kind;  /* NX_ANY: a top-level scalar (`field`); else a ROW of that event */
  nx_field field;
  int nfields;
  nx_field *fields;  /* ROW: child i holds fields[i] */
} nx_col;

/* Per-chunk facts shared by every column: computed once per read(). */
typedef struct nx_chunk {
  int64_t first, n;          /* event ids [first, first + n) */
  uint8_t *kind;             /* nx_kind of each row */
  int64_t *last_person;      /* base-0 id of the newest person at each event */
  int64_t *last_auction;     /* same for auctions */
  int64_t *ms;               /* event time, ms after the base time */
  int64_t *tmp;              /* scratch for narrow integer columns */
  uint8_t *bits[3];          /* validity of each kind's rows (chunk-aligned) */
  int64_t count[3];          /* rows of each kind */
  int64_t bytes;             /* bytes of values written for the chunk, for metrics */
  int64_t cap;
} nx_chunk;

/* Uniform in [0, n) from 32 random bits (as below(), defined further on). */
static inline uint32_t below_n(uint32_t r, uint32_t n) {
  return (uint32_t)(((uint64_t)r * n) >> 32);
}

/* "Hot one time in n": r % n != 0, by a mask when n is a power of two. */
typedef struct nx_ratio {
  uint32_t n, mask;
} nx_ratio;

static inline bool is_hot(nx_ratio r, uint64_t h) {
  return r.mask ? (h & r.mask) != 0 : below_n((uint32_t)h, r.n) != 0;
}

typedef struct nx_state {
  uint64_t key;              /* the seed, mixed */
  int64_t total;             /* events in all, or -1: unbounded */
  double rate;               /* events/s of wall time; 0: as fast as possible */
  int64_t prop[3], denom;    /* proportions of person, auction, bid */
  int64_t delay_ms, delay_rem_ns; /* event-time spacing: whole ms + ns */
  int64_t horizon_ms;        /* an auction's expected lifetime (half the longest) */
  int64_t avg_bytes[3];      /* the size `extra` pads each kind to */
  nx_ratio hot_auctions, hot_bidders, hot_sellers;
  int64_t committed, read_pos, planned_end;
  int64_t replay_end;        /* the next plan ends here (a batch run again), or -1 */
  int split, nsplits;        /* this source reads split `split` of `nsplits` of each batch */
  int64_t pace_start_us;     /* monotonic µs at the first plan (rate only) */
  int64_t pace_base;         /* events committed when pacing began */
  int ncols;
  nx_col *cols;
  char *letters;             /* POOL_BYTES + POOL_SLACK random a-z */
  char *text;                /* the same with a space one time in 13 */
  char digits4[10000 * 4];   /* "0000" .. "9999" */
  nx_pool names, cities, states, channels, urls;
  double price_table[PRICE_STEPS + 1]; /* 10^(6k/PRICE_STEPS) × 100 */
  nx_chunk chunk;
} nx_state;

/* ---- hashing ---- */

static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* The random bits of field f of event id. */
static inline uint64_t draw(const nx_state *st, int64_t id, nx_field f) {
  return mix64(st->key + (uint64_t)id * UINT64_C(0x9E3779B97F4A7C15) +
               (uint64_t)f * UINT64_C(0xD6E8FEB86659FD93));
}

/* Uniform in [0, n) from 32 random bits (Lemire's multiply-shift). */
static inline uint32_t below(uint32_t r, uint32_t n) {
  return (uint32_t)(((uint64_t)r * n) >> 32);
}
static inline uint64_t below64(uint64_t r, uint64_t n) {
  return (uint64_t)(((unsigned __int128)r * n) >> 64);
}
static inline uint32_t hi32(uint64_t h) { return (uint32_t)(h >> 32); }

/* ---- the model ---- */

/* round(10^(6U) × 100): 100 to 10^8, log-uniform.  10^(6U) is a table entry
** for U's top 12 bits times a cubic for the rest (|y| < 0.0034, so the
** error is below 10^-11 relative): exp() and llround() cost more than the
** rest of a bid together. */
static inline int64_t price_of(const nx_state *st, uint64_t h) {
  uint64_t bits = h >> 11; /* U = bits / 2^53 */
  uint32_t k = (uint32_t)(bits >> 41);
  double frac = (double)(bits & ((UINT64_C(1) << 41) - 1)) * 0x1.0p-41;
  double y = frac * (13.815510557964274 / PRICE_STEPS); /* 6 ln 10 / steps */
  double v = st->price_table[k] * (1.0 + y * (1.0 + y * (0.5 + y * (1.0 / 6.0))));
  return (int64_t)(v + 0.5);
}

/* A recent person: one of the last ACTIVE_PEOPLE, or a few not yet born. */
static inline int64_t recent_person(int64_t last_person, uint32_t r) {
  int64_t num = last_person + 1;
  int64_t active = num < ACTIVE_PEOPLE ? num : ACTIVE_PEOPLE;
  return num - active + below(r, (uint32_t)(active + PERSON_ID_LEAD));
}

static inline int64_t recent_auction(int64_t last_auction, uint32_t r) {
  int64_t lo = last_auction - IN_FLIGHT_AUCTIONS;
  if (lo < 0) lo = 0;
  return lo + below(r, (uint32_t)(last_auction - lo + 1 + AUCTION_ID_LEAD));
}

static inline int64_t seller_of(const nx_state *st, int64_t id, int64_t last_person) {
  uint64_t h = draw(st, id, F_A_SELLER);
  int64_t base0 = is_hot(st->hot_sellers, h) ? last_person / HOT_RATIO_100 * HOT_RATIO_100
                                             : recent_person(last_person, hi32(h));
  return FIRST_PERSON_ID + base0;
}

static inline int64_t bid_auction_of(const nx_state *st, int64_t id, int64_t last_auction) {
  uint64_t h = draw(st, id, F_B_AUCTION);
  int64_t base0 = is_hot(st->hot_auctions, h) ? last_auction / HOT_RATIO_100 * HOT_RATIO_100
                                              : recent_auction(last_auction, hi32(h));
  return FIRST_AUCTION_ID + base0;
}

static inline int64_t bidder_of(const nx_state *st, int64_t id, int64_t last_person) {
  uint64_t h = draw(st, id, F_B_BIDDER);
  int64_t base0 = is_hot(st->hot_bidders, h) ? last_person / HOT_RATIO_100 * HOT_RATIO_100 + 1
                                             : recent_person(last_person, hi32(h));
  return FIRST_PERSON_ID + base0;
}

static inline int64_t initial_bid_of(const nx_state *st, int64_t id) {
  return price_of(st, draw(st, id, F_A_INITIAL));
}

static inline int64_t event_us(int64_t ms) { return (BASE_TIME_MS + ms) * 1000; }

static inline int64_t expires_us(const nx_state *st, int64_t id, int64_t ms) {
  uint64_t span = (uint64_t)(2 * st->horizon_ms);
  if (span < 1) span = 1;
  return event_us(ms + 1 + (int64_t)below64(draw(st, id, F_A_EXPIRES), span));
}

/* Which channel (0..3 the named ones, then channel-0 ..): the same draw
** picks the channel and its URL. */
static inline uint32_t channel_of(const nx_state *st, int64_t id) {
  uint64_t h = draw(st, id, F_B_CHANNEL);
  return (h & 1) ? below(hi32(h), NUM_HOT_CHANNELS)
                 : NUM_HOT_CHANNELS + below(hi32(h), NUM_CHANNELS);
}

/* ---- strings: each writes into dst and returns the length ---- */

/* Copy n bytes in 16-byte steps: short copies of varying length are the
** generator's main cost, and a fixed-size step beats memcpy's dispatch.  It
** may read and write up to 15 bytes past n: every source (the pools) has
** that much slack, and so has the destination (fill_strs reserves it). */
#define COPY_SLACK 16
static inline size_t copy_out(char *dst, const char *src, size_t n) {
  for (size_t k = 0; k < n; k += 16) memcpy(dst + k, src + k, 16);
  return n;
}

static inline size_t pool_out(const nx_pool *p, uint32_t i, char *dst) {
  return copy_out(dst, p->buf + p->off[i], p->len[i]);
}

/* Nexmark's nextString(max): 3 to max-1 characters of text, trimmed. */
static inline const char *text_slice(const nx_state *st, uint64_t h, uint32_t max, size_t *len) {
  size_t n = 3 + below((uint32_t)h, max - 3);
  const char *p = st->text + (hi32(h) & (POOL_BYTES - 1));
  while (n && p[0] == ' ') p++, n--;
  while (n && p[n - 1] == ' ') n--;
  *len = n;
  return p;
}

static inline uint32_t name_index(const nx_state *st, int64_t id) {
  return below(hi32(draw(st, id, F_P_NAME)), st->names.n);
}
static inline uint32_t city_index(const nx_state *st, int64_t id) {
  return below(hi32(draw(st, id, F_P_CITY)), COUNT(cities));
}
static inline uint32_t state_index(const nx_state *st, int64_t id) {
  return below(hi32(draw(st, id, F_P_STATE)), COUNT(states));
}

/* letters(3..6) "@" letters(3..4) ".com" */
static inline size_t email_len(uint64_t h) { return (3 + (h & 3)) + 1 + (3 + ((h >> 2) & 1)) + 4; }
static inline size_t email_out(const nx_state *st, int64_t id, char *dst) {
  uint64_t h = draw(st, id, F_P_EMAIL);
  size_t a = 3 + (h & 3), b = 3 + ((h >> 2) & 1);
  memcpy(dst, st->letters + ((h >> 16) & (POOL_BYTES - 1)), a);
  dst[a] = '@';
  memcpy(dst + a + 1, st->letters + ((h >> 40) & (POOL_BYTES - 1)), b);
  memcpy(dst + a + 1 + b, ".com", 4);
  return a + b + 5;
}

#define CARD_LEN 19 /* "dddd dddd dddd dddd" */
static inline size_t card_out(const nx_state *st, int64_t id, char *dst) {
  uint64_t h = draw(st, id, F_P_CARD);
  for (int g = 0; g < 4; g++) {
    uint32_t four = (uint32_t)(((h >> (16 * g)) & 0xFFFF) * 10000 >> 16);
    memcpy(dst + 5 * g, st->digits4 + 4 * four, 4);
    if (g < 3) dst[5 * g + 4] = ' ';
  }
  return CARD_LEN;
}

/* Nexmark's nextExtra: pad an event of `current` bytes to about `avg`,
** within ±20%. */
static inline size_t extra_len(uint64_t h, int64_t current, int64_t avg) {
  int64_t want = avg - current;
  if (want <= 0) return 0;
  int64_t delta = (want + 2) / 5; /* round(want × 0.2) */
  return (size_t)(want - delta + (delta ? below((uint32_t)h, (uint32_t)(2 * delta)) : 0));
}
static inline size_t extra_out(const nx_state *st, uint64_t h, size_t n, char *dst) {
  return copy_out(dst, st->letters + (hi32(h) & (POOL_BYTES - 1)), n);
}

static inline size_t person_extra_out(const nx_state *st, int64_t id, char *dst) {
  int64_t current = 8 + st->names.len[name_index(st, id)] +
                    (int64_t)email_len(draw(st, id, F_P_EMAIL)) + CARD_LEN +
                    st->cities.len[city_index(st, id)] + 2 + 8;
  uint64_t h = draw(st, id, F_P_EXTRA);
  return extra_out(st, h, extra_len(h, current, st->avg_bytes[NX_PERSON]), dst);
}

static inline size_t auction_extra_out(const nx_state *st, int64_t id, char *dst) {
  size_t item, desc;
  text_slice(st, draw(st, id, F_A_ITEM), 20, &item);
  text_slice(st, draw(st, id, F_A_DESC), 100, &desc);
  int64_t current = 8 + (int64_t)item + (int64_t)desc + 6 * 8;
  uint64_t h = draw(st, id, F_A_EXTRA);
  return extra_out(st, h, extra_len(h, current, st->avg_bytes[NX_AUCTION]), dst);
}

static inline size_t bid_extra_out(const nx_state *st, int64_t id, char *dst) {
  uint64_t h = draw(st, id, F_B_EXTRA);
  return extra_out(st, h, extra_len(h, 4 * 8, st->avg_bytes[NX_BID]), dst);
}

static inline size_t text_out(const nx_state *st, int64_t id, nx_field f, uint32_t max,
                              char *dst) {
  size_t n;
  const char *p = text_slice(st, draw(st, id, f), max, &n);
  return copy_out(dst, p, n);
}

/* The longest value a string field can have. */
static size_t max_len(const nx_state *st, nx_field f) {
  switch (f) {
  case F_P_NAME: return st->names.maxlen;
  case F_P_EMAIL: return 6 + 1 + 4 + 4;
  case F_P_CARD: return CARD_LEN;
  case F_P_CITY: return st->cities.maxlen;
  case F_P_STATE: return st->states.maxlen;
  case F_P_EXTRA: return (size_t)(st->avg_bytes[NX_PERSON] + st->avg_bytes[NX_PERSON] / 5 + 2);
  case F_A_ITEM: return 19;
  case F_A_DESC: return 99;
  case F_A_EXTRA: return (size_t)(st->avg_bytes[NX_AUCTION] + st->avg_bytes[NX_AUCTION] / 5 + 2);
  case F_B_CHANNEL: return st->channels.maxlen;
  case F_B_URL: return st->urls.maxlen;
  case F_B_EXTRA: return (size_t)(st->avg_bytes[NX_BID] + st->avg_bytes[NX_BID] / 5 + 2);
  default: return 0;
  }
}

/* ---- pools ---- */

static bool pool_add(nx_pool *p, const char *s, size_t n) {
  if (p->used + n + COPY_SLACK > p->cap) {
    uint32_t cap = p->cap ? p->cap : 256;
    while (cap < p->used + n + COPY_SLACK) cap *= 2;
    char *b = realloc(p->buf, cap);
    if (!b) return false;
    p->buf = b;
    p->cap = cap;
  }
  memcpy(p->buf + p->used, s, n);
  p->off[p->n] = p->used;
  p->len[p->n] = (uint32_t)n;
  p->used += (uint32_t)n;
  if (n > p->maxlen) p->maxlen = (uint32_t)n;
  p->n++;
  return true;
}

static bool pool_init(nx_pool *p, uint32_t n) {
  p->off = calloc(n, sizeof *p->off);
  p->len = calloc(n, sizeof *p->len);
  return p->off && p->len;
}

static void pool_free(nx_pool *p) {
  free(p->buf);
  free(p->off);
  free(p->len);
}

/* Decimal digits of v at dst; returns the length. */
static size_t put_uint(char *dst, uint32_t v) {
  char tmp[10];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (size_t i = 0; i < n; i++) dst[i] = tmp[n - 1 - i];
  return n;
}

static uint32_t reverse_bits(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; i++, v >>= 1) r = (r << 1) | (v & 1);
  return r;
}

static bool build_pools(nx_state *st) {
  uint64_t g = st->key ^ UINT64_C(0x5851F42D4C957F2D);
  st->letters = malloc(POOL_BYTES + POOL_SLACK);
  st->text = malloc(POOL_BYTES + POOL_SLACK);
  if (!st->letters || !st->text) return false;
  for (uint32_t i = 0; i < POOL_BYTES + POOL_SLACK; i++) {
    uint64_t h = mix64(g += UINT64_C(0x9E3779B97F4A7C15));
    st->letters[i] = (char)('a' + below((uint32_t)h, 26));
    st->text[i] = below(hi32(h), 13) == 0 ? ' ' : (char)('a' + below((uint32_t)(h >> 16), 26));
  }
  for (int k = 0; k <= PRICE_STEPS; k++)
    st->price_table[k] = pow(10.0, 6.0 * k / PRICE_STEPS) * 100.0;
  for (uint32_t v = 0; v < 10000; v++) {
    char *d = st->digits4 + 4 * v;
    d[0] = (char)('0' + v / 1000);
    d[1] = (char)('0' + v / 100 % 10);
    d[2] = (char)('0' + v / 10 % 10);
    d[3] = (char)('0' + v % 10);
  }
  if (!pool_init(&st->names, COUNT(first_names) * COUNT(last_names))) return false;
  for (uint32_t f = 0; f < COUNT(first_names); f++)
    for (uint32_t l = 0; l < COUNT(last_names); l++) {
      char buf[64];
      size_t a = strlen(first_names[f]), b = strlen(last_names[l]);
      memcpy(buf, first_names[f], a);
      buf[a] = ' ';
      memcpy(buf + a + 1, last_names[l], b);
      if (!pool_add(&st->names, buf, a + 1 + b)) return false;
    }
  if (!pool_init(&st->cities, COUNT(cities)) || !pool_init(&st->states, COUNT(states)))
    return false;
  for (uint32_t i = 0; i < COUNT(cities); i++)
    if (!pool_add(&st->cities, cities[i], strlen(cities[i]))) return false;
  for (uint32_t i = 0; i < COUNT(states); i++)
    if (!pool_add(&st->states, states[i], strlen(states[i]))) return false;
  /* Channel i has a fixed URL, as Nexmark caches them: a random base URL,
  ** plus the channel's number bit-reversed for the unnamed ones. */
  uint32_t nch = NUM_HOT_CHANNELS + NUM_CHANNELS;
  if (!pool_init(&st->channels, nch) || !pool_init(&st->urls, nch)) return false;
  for (uint32_t i = 0; i < nch; i++) {
    char buf[128];
    size_t n;
    if (i < NUM_HOT_CHANNELS) {
      n = strlen(hot_channels[i]);
      memcpy(buf, hot_channels[i], n);
    } else {
      memcpy(buf, "channel-", 8);
      n = 8 + put_uint(buf + 8, i - NUM_HOT_CHANNELS);
    }
    if (!pool_add(&st->channels, buf, n)) return false;
    static const char prefix[] = "https://www.nexmark.com/";
    n = sizeof prefix - 1;
    memcpy(buf, prefix, n);
    for (int part = 0; part < 3; part++) {
      uint64_t h = mix64(g += UINT64_C(0x9E3779B97F4A7C15));
      size_t k = 3 + (h & 1);
      memcpy(buf + n, st->letters + (hi32(h) & (POOL_BYTES - 1)), k);
      n += k;
      buf[n++] = '/';
    }
    static const char item[] = "item.htm?query=1";
    memcpy(buf + n, item, sizeof item - 1);
    n += sizeof item - 1;
    if (i >= NUM_HOT_CHANNELS) {
      static const char cid[] = "&channel_id=";
      memcpy(buf + n, cid, sizeof cid - 1);
      n += sizeof cid - 1;
      n += put_uint(buf + n, reverse_bits(i - NUM_HOT_CHANNELS) & 0x7FFFFFFFu);
    }
    if (!pool_add(&st->urls, buf, n)) return false;
  }
  return true;
}

/* ---- options ---- */

static int bad_option(dp_source *s, const char *key, const char *value, const char *what) {
  return dp_error(s->diags, DIPPER_OPTION, s->table->with_span,
                  "nexmark option '%s' = '%s' %s", key, value, what);
}

static int read_int_option(dp_source *s, const char *key, int64_t dflt, int64_t *out) {
  const char *v = dp_table_option(s->table, key, NULL);
  *out = dflt;
  if (!v) return DIPPER_OK;
  char *end;
  long long x = strtoll(v, &end, 10);
  if (end == v || *end || x < 0)
    return bad_option(s, key, v, "is not a whole number >= 0; write digits only, e.g. '42'");
  *out = x;
  return DIPPER_OK;
}

/* A positive number of events per second: *out, or 0 when the option is
** absent. */
static int read_rate(dp_source *s, const char *key, double *out) {
  const char *v = dp_table_option(s->table, key, NULL);
  *out = 0;
  if (!v) return DIPPER_OK;
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !(x > 0) || x > 1e12)
    return bad_option(s, key, v,
                      "is not a positive number of events per second; write e.g. '10000', or "
                      "leave the option out for Nexmark's 10000");
  *out = x;
  return DIPPER_OK;
}

/* A size as Flink's MemorySize writes it: digits, then b/bytes, k/kb,
** m/mb (any case, blanks between allowed); bare digits are bytes. */
static int read_size_option(dp_source *s, const char *key, int64_t dflt, int64_t *out) {
  const char *v = dp_table_option(s->table, key, NULL);
  *out = dflt;
  if (!v) return DIPPER_OK;
  char *end;
  long long x = strtoll(v, &end, 10);
  while (*end == ' ') end++;
  int64_t unit = 0;
  if (!*end || !strcasecmp(end, "b") || !strcasecmp(end, "bytes")) unit = 1;
  else if (!strcasecmp(end, "k") || !strcasecmp(end, "kb")) unit = 1024;
  else if (!strcasecmp(end, "m") || !strcasecmp(end, "mb")) unit = 1024 * 1024;
  if (end == v || !isdigit((unsigned char)v[0]) || unit == 0 || x < 0 ||
      x > MAX_AVG_BYTES / unit)
    return bad_option(s, key, v,
                      "is not a size from 0 to 10000 bytes; write e.g. '200b' or '1kb'");
  *out = x * unit;
  return DIPPER_OK;
}

static int read_ratio_option(dp_source *s, const char *key, int64_t dflt, nx_ratio *out) {
  int64_t n;
  int rc = read_int_option(s, key, dflt, &n);
  if (rc) return rc;
  if (n < 1 || n > 1000000)
    return bad_option(s, key, dp_table_option(s->table, key, ""),
                      "is not a ratio from 1 to 1000000: a hot id is chosen with probability "
                      "1 - 1/ratio (1: never)");
  out->n = (uint32_t)n;
  out->mask = n > 1 && (n & (n - 1)) == 0 ? (uint32_t)(n - 1) : 0;
  return DIPPER_OK;
}

/* The rates: the spacing of event times, and whether and how fast the
** events are paced in wall time (st->rate, 0: as fast as possible). */
static int read_rates(dp_source *s, nx_state *st, double *spacing_rate) {
  double own = 0, own2 = 0, first = 0, next = 0;
  int rc = read_rate(s, "rate", &own);
  if (!rc) rc = read_rate(s, "events-per-second", &own2);
  if (!rc) rc = read_rate(s, "first-event.rate", &first);
  if (!rc) rc = read_rate(s, "next-event.rate", &next); /* checked; Nexmark ignores it too */
  if (rc) return rc;
  if (own == 0) own = own2;
  if (own > 0 && first > 0)
    return dp_error(s->diags, DIPPER_OPTION, s->table->with_span,
                    "nexmark options 'rate' (dipper's: spaces and paces the events) and "
                    "'first-event.rate' (Nexmark's: spaces them only) both set the event rate; "
                    "keep one");
  const char *max_speed = dp_table_option(s->table, "max-emit-speed", NULL);
  bool paced_by_time = max_speed && strcasecmp(max_speed, "false") == 0;
  *spacing_rate = own > 0 ? own : first > 0 ? first : DEFAULT_RATE;
  st->rate = own > 0 || paced_by_time ? *spacing_rate : 0;
  return DIPPER_OK;
}

static int read_options(dp_source *s, nx_state *st) {
  const dp_table_def *t = s->table;
  double spacing_rate;
  int rc = read_rates(s, st, &spacing_rate);
  if (rc) return rc;
  st->total = -1;
  const char *num = dp_table_option(t, "events.num", NULL);
  if (num) {
    rc = read_int_option(s, "events.num", -1, &st->total);
    if (!rc && st->total == 0) st->total = -1; /* Nexmark's 0: no limit */
  } else if (dp_table_option(t, "number-of-events", NULL)) {
    rc = read_int_option(s, "number-of-events", -1, &st->total);
  }
  if (!rc) rc = read_int_option(s, "person.proportion", 1, &st->prop[NX_PERSON]);
  if (!rc) rc = read_int_option(s, "auction.proportion", 3, &st->prop[NX_AUCTION]);
  if (!rc) rc = read_int_option(s, "bid.proportion", 46, &st->prop[NX_BID]);
  if (!rc) rc = read_size_option(s, "person.avg-size", AVG_PERSON_BYTES, &st->avg_bytes[NX_PERSON]);
  if (!rc) rc = read_size_option(s, "auction.avg-size", AVG_AUCTION_BYTES, &st->avg_bytes[NX_AUCTION]);
  if (!rc) rc = read_size_option(s, "bid.avg-size", AVG_BID_BYTES, &st->avg_bytes[NX_BID]);
  if (!rc) rc = read_ratio_option(s, "bid.hot-ratio.auctions", 2, &st->hot_auctions);
  if (!rc) rc = read_ratio_option(s, "bid.hot-ratio.bidders", 4, &st->hot_bidders);
  if (!rc) rc = read_ratio_option(s, "auction.hot-ratio.sellers", 4, &st->hot_sellers);
  if (rc) return rc;
  if (st->prop[0] > 1000000 || st->prop[1] > 1000000 || st->prop[2] > 1000000)
    return dp_error(s->diags, DIPPER_OPTION, t->with_span,
                    "nexmark proportions above 1000000 are not supported; scale them down "
                    "(only their ratio matters, e.g. 1:3:46)");
  st->denom = st->prop[0] + st->prop[1] + st->prop[2];
  if (st->denom == 0)
    return dp_error(s->diags, DIPPER_OPTION, t->with_span,
                    "the nexmark proportions 'person.proportion', 'auction.proportion' and "
                    "'bid.proportion' are all 0, so no event could be generated; leave them out "
                    "for the standard 1:3:46 mix");
  int64_t seed;
  rc = read_int_option(s, "seed", 0, &seed);
  if (rc) return rc;
  st->key = mix64((uint64_t)seed + UINT64_C(0x2545F4914F6CDD1D));
  /* Event-time spacing in ns, split into whole ms and the rest so that the
  ** time of consecutive events is a running sum, exact at any rate. */
  double spacing_ns = 1e9 / spacing_rate;
  if (spacing_ns > 1e15) spacing_ns = 1e15;
  int64_t delay_ns = (int64_t)llround(spacing_ns);
  st->delay_ms = delay_ns / 1000000;
  st->delay_rem_ns = delay_ns % 1000000;
  /* Auctions last up to twice the time it takes IN_FLIGHT_AUCTIONS auctions
  ** to be created (Nexmark's nextAuctionLengthMs). */
  int64_t events_for_auctions =
      st->prop[NX_AUCTION] ? IN_FLIGHT_AUCTIONS * st->denom / st->prop[NX_AUCTION] : 0;
  st->horizon_ms = (int64_t)((dp_i128)events_for_auctions * delay_ns / 1000000);
  return DIPPER_OK;
}

/* ---- the scan schema ---- */

static dp_span column_span(const dp_table_def *t, const char *name) {
  int i = dp_schema_find(&t->schema, name);
  return (i >= 0 && t->cols) ? t->cols[i].span : t->span;
}

static const nx_field_def *find_field(nx_kind kind, const char *name) {
  for (size_t i = 0; i < NFIELD_DEFS; i++)
    if (field_defs[i].kind == kind && strcasecmp(field_defs[i].name, name) == 0)
      return &field_defs[i];
  return NULL;
}

static const char *class_name(nx_class c) {
  return c == NX_INT ? "an integer (BIGINT)" : c == NX_STR ? "a STRING" : "a TIMESTAMP(3)";
}

static bool type_fits(nx_class c, const dp_type *t) {
  switch (c) {
  case NX_INT: return t->kind == DP_T_BIGINT || t->kind == DP_T_INT;
  case NX_STR: return t->kind == DP_T_STRING;
  case NX_TIME: return t->kind == DP_T_TIMESTAMP || t->kind == DP_T_TIMESTAMP_LTZ;
  }
  return false;
}

static int type_error(dp_source *s, const char *col, const char *field, nx_class c,
                      const dp_type *t) {
  char spelled[128];
  dp_type_print(spelled, sizeof spelled, t);
  return dp_error(s->diags, DIPPER_TYPE, column_span(s->table, col),
                  "the nexmark generator produces `%s%s%s` as %s, but table `%s` declares it %s; "
                  "declare it %s",
                  col, field ? "." : "", field ? field : "", class_name(c), s->table->name, spelled,
                  c == NX_INT ? "BIGINT" : c == NX_STR ? "STRING" : "TIMESTAMP(3)");
}

static int map_columns(dp_source *s, nx_state *st) {
  const dp_schema *sc = s->schema;
  st->ncols = sc->ncols;
  st->cols = calloc(sc->ncols ? (size_t)sc->ncols : 1, sizeof *st->cols);
  if (!st->cols) return DIPPER_NOMEM;
  for (int i = 0; i < sc->ncols; i++) {
    const char *name = sc->cols[i].name;
    const dp_type *t = sc->cols[i].type;
    nx_col *c = &st->cols[i];
    int kind = -1;
    for (int k = 0; k < 3; k++)
      if (strcasecmp(name, kind_names[k]) == 0) kind = k;
    if (kind < 0) {
      const nx_field_def *f = find_field(NX_ANY, name);
      if (!f)
        return dp_error(s->diags, DIPPER_NAME, column_span(s->table, name),
                        "the nexmark generator has no column `%s` (table `%s`); its columns are "
                        "event_type INT, person ROW<..>, auction ROW<..>, bid ROW<..> and "
                        "dateTime TIMESTAMP(3) — remove `%s` or make it a computed column",
                        name, s->table->name, name);
      if (!type_fits(f->cls, t)) return type_error(s, name, NULL, f->cls, t);
      c->row_kind = NX_ANY;
      c->field = f->field;
      continue;
    }
    if (t->kind != DP_T_ROW) {
      char spelled[128];
      dp_type_print(spelled, sizeof spelled, t);
      return dp_error(s->diags, DIPPER_TYPE, column_span(s->table, name),
                      "column `%s` of table `%s` holds the nexmark %s events and must be a ROW of "
                      "their fields, e.g. ROW<%s>, not %s",
                      name, s->table->name, kind_names[kind],
                      kind == NX_PERSON    ? "id BIGINT, name STRING, dateTime TIMESTAMP(3)"
                      : kind == NX_AUCTION ? "id BIGINT, seller BIGINT, dateTime TIMESTAMP(3)"
                                           : "auction BIGINT, price BIGINT, dateTime TIMESTAMP(3)",
                      spelled);
    }
    c->row_kind = (nx_kind)kind;
    c->nfields = t->nfields;
    c->fields = calloc(t->nfields ? (size_t)t->nfields : 1, sizeof *c->fields);
    if (!c->fields) return DIPPER_NOMEM;
    for (int j = 0; j < t->nfields; j++) {
      const dp_field *fd = &t->fields[j];
      const nx_field_def *f = find_field((nx_kind)kind, fd->name);
      if (!f) {
        char known[256];
        size_t len = 0;
        known[0] = '\0';
        for (size_t d = 0; d < NFIELD_DEFS; d++) {
          if (field_defs[d].kind != (nx_kind)kind) continue;
          size_t n = strlen(field_defs[d].name);
          if (len + n + 3 >= sizeof known) break;
          if (len) known[len++] = ',', known[len++] = ' ';
          memcpy(known + len, field_defs[d].name, n + 1);
          len += n;
        }
        return dp_error(s->diags, DIPPER_NAME, column_span(s->table, name),
                        "the nexmark %s has no field `%s` (column `%s` of table `%s`); its fields "
                        "are %s",
                        kind_names[kind], fd->name, name, s->table->name, known);
      }
      if (!type_fits(f->cls, fd->type)) return type_error(s, name, fd->name, f->cls, fd->type);
      c->fields[j] = f->field;
    }
  }
  return DIPPER_OK;
}

/* ---- filling a chunk ---- */

static int chunk_reserve(nx_chunk *ch, int64_t n) {
  if (n <= ch->cap) return DIPPER_OK;
  size_t rows = (size_t)n, bytes = (rows + 7) / 8;
  uint8_t *kind = realloc(ch->kind, rows);
  if (kind) ch->kind = kind;
  int64_t **arrays[] = {&ch->last_person, &ch->last_auction, &ch->ms, &ch->tmp};
  bool ok = kind != NULL;
  for (size_t i = 0; ok && i < sizeof arrays / sizeof arrays[0]; i++) {
    int64_t *p = realloc(*arrays[i], rows * sizeof *p);
    if (p)
      *arrays[i] = p;
    else
      ok = false;
  }
  for (int k = 0; ok && k < 3; k++) {
    uint8_t *p = realloc(ch->bits[k], bytes);
    if (p)
      ch->bits[k] = p;
    else
      ok = false;
  }
  if (!ok) return DIPPER_NOMEM;
  ch->cap = n;
  return DIPPER_OK;
}

static void chunk_free(nx_chunk *ch) {
  free(ch->kind);
  free(ch->last_person);
  free(ch->last_auction);
  free(ch->ms);
  free(ch->tmp);
  for (int k = 0; k < 3; k++) free(ch->bits[k]);
}

/* Kinds, the newest person and auction, and the time of events
** [first, first+n): running counters, no division per row. */
static void chunk_prepare(const nx_state *st, nx_chunk *ch, int64_t first, int64_t n) {
  const int64_t P = st->prop[NX_PERSON], A = st->prop[NX_AUCTION], D = st->denom;
  int64_t epoch = first / D, rem = first % D;
  int64_t ms = (int64_t)((dp_i128)first * (st->delay_ms * 1000000 + st->delay_rem_ns) / 1000000);
  int64_t ns = (int64_t)((dp_i128)first * (st->delay_ms * 1000000 + st->delay_rem_ns) % 1000000);
  ch->first = first;
  ch->n = n;
  ch->count[0] = ch->count[1] = ch->count[2] = 0;
  ch->bytes = 0;
  for (int64_t i = 0; i < n; i++) {
    nx_kind k = rem < P ? NX_PERSON : rem < P + A ? NX_AUCTION : NX_BID;
    ch->kind[i] = (uint8_t)k;
    ch->count[k]++;
    int64_t lp = epoch * P + (rem < P ? rem : P - 1);
    int64_t la = rem < P ? epoch * A - 1 : rem >= P + A ? epoch * A + A - 1 : epoch * A + rem - P;
    ch->last_person[i] = lp < 0 ? 0 : lp;
    ch->last_auction[i] = la < 0 ? 0 : la;
    ch->ms[i] = ms;
    ms += st->delay_ms;
    ns += st->delay_rem_ns;
    if (ns >= 1000000) ns -= 1000000, ms++;
    if (++rem == D) rem = 0, epoch++;
  }
  for (int k = 0; k < 3; k++) memset(ch->bits[k], 0, (size_t)(n + 7) / 8);
  for (int64_t i = 0; i < n; i++)
    ch->bits[ch->kind[i]][i >> 3] |= (uint8_t)(1u << (unsigned)(i & 7));
}

/* Make v's validity say: rows [at, at+n) are valid where the chunk's row is
** of kind k (every row when k is NX_ANY). */
static int set_validity(dp_vector *v, const nx_chunk *ch, nx_kind k) {
  int64_t at = v->length, n = ch->n;
  int64_t valid = k == NX_ANY ? n : ch->count[k];
  if (valid == n && !v->validity) return DIPPER_OK;
  if (!v->validity) {
    size_t bytes = (size_t)(v->capacity + 7) / 8;
    v->validity = malloc(bytes ? bytes : 1);
    if (!v->validity) return DIPPER_NOMEM;
    memset(v->validity, 0xFF, (size_t)at / 8);
    for (int64_t i = at & ~INT64_C(7); i < at; i++) dp_bit_set(v->validity, i, true);
  }
  if (valid == n) {
    for (int64_t i = 0; i < n; i++) dp_bit_set(v->validity, at + i, true);
  } else if ((at & 7) == 0) {
    memcpy(v->validity + at / 8, ch->bits[k], (size_t)(n + 7) / 8);
  } else {
    for (int64_t i = 0; i < n; i++) dp_bit_set(v->validity, at + i, ch->kind[i] == (uint8_t)k);
  }
  v->null_count += n - valid;
  return DIPPER_OK;
}

/* One integer or time column: a loop per field, values 0 under null rows. */
#define INT_LOOP(KIND, EXPR)                                          \
  for (int64_t i = 0; i < n; i++) {                                   \
    int64_t id = first + i;                                           \
    (void)id;                                                         \
    dst[i] = ch->kind[i] == (KIND) ? (EXPR) : 0;                      \
  }

static void gen_ints(const nx_state *st, const nx_chunk *ch, nx_field f, int64_t *dst) {
  const int64_t first = ch->first, n = ch->n;
  const int64_t *lp = ch->last_person, *la = ch->last_auction, *ms = ch->ms;
  switch (f) {
  case F_EVENT_TYPE:
    for (int64_t i = 0; i < n; i++) dst[i] = ch->kind[i];
    break;
  case F_EVENT_TIME:
    for (int64_t i = 0; i < n; i++) dst[i] = event_us(ms[i]);
    break;
  case F_P_ID: INT_LOOP(NX_PERSON, FIRST_PERSON_ID + lp[i]) break;
  case F_P_TIME: INT_LOOP(NX_PERSON, event_us(ms[i])) break;
  case F_A_ID: INT_LOOP(NX_AUCTION, FIRST_AUCTION_ID + la[i]) break;
  case F_A_INITIAL: INT_LOOP(NX_AUCTION, initial_bid_of(st, id)) break;
  case F_A_RESERVE:
    INT_LOOP(NX_AUCTION, initial_bid_of(st, id) + price_of(st, draw(st, id, F_A_RESERVE))) break;
  case F_A_TIME: INT_LOOP(NX_AUCTION, event_us(ms[i])) break;
  case F_A_EXPIRES: INT_LOOP(NX_AUCTION, expires_us(st, id, ms[i])) break;
  case F_A_SELLER: INT_LOOP(NX_AUCTION, seller_of(st, id, lp[i])) break;
  case F_A_CATEGORY:
    INT_LOOP(NX_AUCTION, FIRST_CATEGORY_ID + below(hi32(draw(st, id, F_A_CATEGORY)), NUM_CATEGORIES))
    break;
  case F_B_AUCTION: INT_LOOP(NX_BID, bid_auction_of(st, id, la[i])) break;
  case F_B_BIDDER: INT_LOOP(NX_BID, bidder_of(st, id, lp[i])) break;
  case F_B_PRICE: INT_LOOP(NX_BID, price_of(st, draw(st, id, F_B_PRICE))) break;
  case F_B_TIME: INT_LOOP(NX_BID, event_us(ms[i])) break;
  default:
    memset(dst, 0, (size_t)n * sizeof *dst);
    break;
  }
}

static int fill_ints(nx_state *st, dp_vector *v, nx_field f) {
  nx_chunk *ch = &st->chunk;
  int64_t at = v->length;
  int64_t *dst = v->phys == DP_PHYS_I64 ? (int64_t *)v->values + at : ch->tmp;
  gen_ints(st, ch, f, dst);
  if (v->phys == DP_PHYS_I32) {
    int32_t *out = (int32_t *)v->values + at;
    for (int64_t i = 0; i < ch->n; i++) out[i] = (int32_t)dst[i];
  } else if (v->phys != DP_PHYS_I64) {
    return DIPPER_INTERNAL; /* map_columns admits only INT, BIGINT and timestamps */
  }
  return DIPPER_OK;
}

#define STR_LOOP(KIND, CALL)                                          \
  for (int64_t i = 0; i < n; i++) {                                   \
    if (ch->kind[i] == (KIND)) {                                      \
      int64_t id = first + i;                                         \
      char *out = data + len;                                         \
      len += (int64_t)(CALL);                                         \
    }                                                                 \
    offs[i + 1] = (int32_t)len;                                       \
  }

static int fill_strs(nx_state *st, dp_vector *v, nx_kind kind, nx_field f) {
  nx_chunk *ch = &st->chunk;
  const int64_t first = ch->first, n = ch->n;
  int64_t need = v->data_len + ch->count[kind] * (int64_t)max_len(st, f) + COPY_SLACK;
  if (need > INT32_MAX) return DIPPER_LIMIT;
  if (dp_grow(&v->data, &v->data_cap, need, 1, 4096)) return DIPPER_NOMEM;
  char *data = v->data;
  int64_t len = v->data_len;
  int32_t *offs = v->offsets + v->length;
  switch (f) {
  case F_P_NAME: STR_LOOP(NX_PERSON, pool_out(&st->names, name_index(st, id), out)) break;
  case F_P_EMAIL: STR_LOOP(NX_PERSON, email_out(st, id, out)) break;
  case F_P_CARD: STR_LOOP(NX_PERSON, card_out(st, id, out)) break;
  case F_P_CITY: STR_LOOP(NX_PERSON, pool_out(&st->cities, city_index(st, id), out)) break;
  case F_P_STATE: STR_LOOP(NX_PERSON, pool_out(&st->states, state_index(st, id), out)) break;
  case F_P_EXTRA: STR_LOOP(NX_PERSON, person_extra_out(st, id, out)) break;
  case F_A_ITEM: STR_LOOP(NX_AUCTION, text_out(st, id, F_A_ITEM, 20, out)) break;
  case F_A_DESC: STR_LOOP(NX_AUCTION, text_out(st, id, F_A_DESC, 100, out)) break;
  case F_A_EXTRA: STR_LOOP(NX_AUCTION, auction_extra_out(st, id, out)) break;
  case F_B_CHANNEL: STR_LOOP(NX_BID, pool_out(&st->channels, channel_of(st, id), out)) break;
  case F_B_URL: STR_LOOP(NX_BID, pool_out(&st->urls, channel_of(st, id), out)) break;
  case F_B_EXTRA: STR_LOOP(NX_BID, bid_extra_out(st, id, out)) break;
  default:
    for (int64_t i = 0; i < n; i++) offs[i + 1] = (int32_t)len;
    break;
  }
  st->chunk.bytes += len - v->data_len;
  v->data_len = len;
  return DIPPER_OK;
}

/* Fill the field's values for the chunk (validity already set). */
static int fill_field(nx_state *st, dp_vector *v, nx_kind kind, nx_field f) {
  int rc;
  const nx_field_def *def = NULL;
  for (size_t i = 0; i < NFIELD_DEFS && !def; i++)
    if (field_defs[i].field == f) def = &field_defs[i];
  if (!def) return DIPPER_INTERNAL;
  if (def->cls == NX_STR) {
    rc = fill_strs(st, v, kind, f);
  } else {
    rc = fill_ints(st, v, f);
    st->chunk.bytes += 8 * (kind == NX_ANY ? st->chunk.n : st->chunk.count[kind]);
  }
  if (rc) return rc;
  v->length += st->chunk.n;
  return DIPPER_OK;
}

static int fill_chunk(nx_state *st, dp_batch *out, int64_t first, int64_t n) {
  int rc = chunk_reserve(&st->chunk, n);
  if (rc) return rc;
  chunk_prepare(st, &st->chunk, first, n);
  for (int c = 0; c < st->ncols && c < out->ncols; c++) {
    const nx_col *col = &st->cols[c];
    dp_vector *v = out->cols[c];
    if ((rc = dp_vector_reserve(v, n)) != DIPPER_OK) return rc;
    if (col->row_kind == NX_ANY) {
      if ((rc = set_validity(v, &st->chunk, NX_ANY)) != DIPPER_OK) return rc;
      if ((rc = fill_field(st, v, NX_ANY, col->field)) != DIPPER_OK) return rc;
      continue;
    }
    if (v->phys != DP_PHYS_STRUCT || v->nchildren != col->nfields) return DIPPER_INTERNAL;
    if ((rc = set_validity(v, &st->chunk, col->row_kind)) != DIPPER_OK) return rc;
    for (int j = 0; j < col->nfields; j++) {
      dp_vector *child = v->children[j];
      if ((rc = dp_vector_reserve(child, n)) != DIPPER_OK) return rc;
      /* A field of a null ROW is null too, so that a reader of the field
      ** alone never sees a value there. */
      if ((rc = set_validity(child, &st->chunk, col->row_kind)) != DIPPER_OK) return rc;
      if ((rc = fill_field(st, child, col->row_kind, col->fields[j])) != DIPPER_OK) return rc;
    }
    v->length += n;
  }
  return dp_batch_sync(out);
}

/* ---- the class ---- */

static int64_t mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void nx_close(dp_source *s) {
  nx_state *st = s->state;
  if (!st) return;
  if (st->cols)
    for (int i = 0; i < st->ncols; i++) free(st->cols[i].fields);
  free(st->cols);
  free(st->letters);
  free(st->text);
  pool_free(&st->names);
  pool_free(&st->cities);
  pool_free(&st->states);
  pool_free(&st->channels);
  pool_free(&st->urls);
  chunk_free(&st->chunk);
  free(st);
  s->state = NULL;
}

static int nx_open(dp_source *s) {
  nx_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  s->state = st;
  st->replay_end = -1;
  int rc = read_options(s, st);
  if (!rc) rc = map_columns(s, st);
  if (!rc && !build_pools(st)) rc = DIPPER_NOMEM;
  if (rc) nx_close(s);
  return rc;
}

static int nx_plan_batch(dp_source *s, int64_t max_rows, bool *exhausted) {
  nx_state *st = s->state;
  if (st->replay_end >= 0) { /* a batch run again after a restart: its logged end */
    st->planned_end = st->replay_end;
    st->replay_end = -1;
    *exhausted = st->total >= 0 && st->planned_end >= st->total;
    return DIPPER_OK;
  }
  int64_t end = INT64_MAX;
  if (st->total >= 0) end = st->total;
  if (st->rate > 0) {
    /* Paced: the events whose wall-clock turn has come since the first plan. */
    int64_t now = mono_us();
    if (st->pace_start_us == 0) {
      st->pace_start_us = now;
      st->pace_base = st->committed;
    }
    double due = (double)(now - st->pace_start_us) * st->rate / 1e6;
    int64_t avail = st->pace_base + (due < 9e18 ? (int64_t)due : INT64_MAX / 2);
    if (avail < end) end = avail;
  }
  int64_t cap = max_rows > 0 ? max_rows : (st->total < 0 && st->rate <= 0 ? UNCAPPED_BATCH_ROWS : 0);
  if (cap > 0 && st->read_pos <= INT64_MAX - cap && st->read_pos + cap < end)
    end = st->read_pos + cap;
  if (end < st->read_pos) end = st->read_pos;
  if (end > st->planned_end) st->planned_end = end;
  *exhausted = st->total >= 0 && st->planned_end >= st->total;
  return DIPPER_OK;
}

/* The end of this split's share of the planned batch [committed, planned_end),
** moving read_pos to its start: equal shares, in event order. */
static int64_t split_end(nx_state *st) {
  if (st->nsplits <= 1) return st->planned_end;
  int64_t len = st->planned_end - st->committed;
  int64_t lo = st->committed + (int64_t)((__int128)len * st->split / st->nsplits);
  int64_t hi = st->committed + (int64_t)((__int128)len * (st->split + 1) / st->nsplits);
  if (st->read_pos < lo) st->read_pos = lo;
  return hi;
}

static int nx_read(dp_source *s, dp_batch *out, int64_t want, bool *done) {
  nx_state *st = s->state;
  int64_t end = split_end(st);
  int64_t n = end - st->read_pos;
  if (want > 0 && n > want) n = want;
  if (n > MAX_CHUNK_ROWS) n = MAX_CHUNK_ROWS;
  if (n > 0) {
    int rc = fill_chunk(st, out, st->read_pos, n);
    if (rc) {
      if (rc == DIPPER_NOMEM || rc == DIPPER_LIMIT)
        return dp_error(s->diags, rc, s->table->span,
                        "the nexmark source of table `%s` could not allocate a chunk of %lld "
                        "events", s->table->name, (long long)n);
      return dp_error(s->diags, rc, s->table->span,
                      "the nexmark source of table `%s` was handed a batch that does not match "
                      "its scan schema",
                      s->table->name);
    }
    st->read_pos += n;
    s->metrics.rows += n;
    s->metrics.bytes += st->chunk.bytes;
  }
  *done = st->read_pos >= end;
  return DIPPER_OK;
}

static int nx_commit(dp_source *s) {
  nx_state *st = s->state;
  /* A split read its share only; the batch is committed whole. */
  if (st->nsplits > 1) st->read_pos = st->planned_end;
  st->committed = st->read_pos;
  if (st->planned_end < st->read_pos) st->planned_end = st->read_pos;
  return DIPPER_OK;
}

/* Checkpoints: an event is a function of its id and the seed, so the
** position is the count committed and a plan its end. */
static int nx_save_plan(dp_source *s, dp_buf *out) {
  const nx_state *st = s->state;
  dp_put_svar(out, st->planned_end);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int nx_save_position(dp_source *s, dp_buf *out) {
  const nx_state *st = s->state;
  dp_put_svar(out, st->committed);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int nx_bad_bytes(dp_source *s) {
  dp_span nowhere = {0, 0, 0, 0};
  return dp_error(s->diags, DIPPER_CORRUPT, nowhere,
                  "table `%s`: the checkpoint's events do not fit this nexmark table",
                  s->table->name);
}

static int nx_restore_position(dp_source *s, dp_rd *in) {
  nx_state *st = s->state;
  int64_t at = dp_get_svar(in);
  if (in->bad || at < 0 || (st->total >= 0 && at > st->total)) return nx_bad_bytes(s);
  st->committed = st->read_pos = st->planned_end = at;
  return DIPPER_OK;
}

static int nx_replay_plan(dp_source *s, dp_rd *in) {
  nx_state *st = s->state;
  int64_t end = dp_get_svar(in);
  if (in->bad || end < st->read_pos || (st->total >= 0 && end > st->total)) return nx_bad_bytes(s);
  st->replay_end = end;
  return DIPPER_OK;
}

/* An event is a function of its id: a split generates its share of ids
** alone.  Paced plans follow the clock, so they must be replayed. */
static int nx_split(dp_source *s, int index, int count, bool replayed, const char **why) {
  nx_state *st = s->state;
  if (st->rate > 0 && !replayed) {
    *why = "a paced nexmark table ('rate', 'events-per-second' or 'max-emit-speed' = "
           "'false') plans by the clock, which the splits "
           "of a batch-mode query cannot share";
    return DIPPER_UNSUPPORTED;
  }
  st->split = index;
  st->nsplits = count;
  return DIPPER_OK;
}

const dp_source_class dp_source_nexmark = {
    .name = "nexmark",
    .open = nx_open,
    .plan_batch = nx_plan_batch,
    .read = nx_read,
    .commit = nx_commit,
    .close = nx_close,
    .save_plan = nx_save_plan,
    .save_position = nx_save_position,
    .restore_position = nx_restore_position,
    .replay_plan = nx_replay_plan,
    .split = nx_split,
};
