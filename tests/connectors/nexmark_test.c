/*
** nexmark_test.c — the nexmark source: the event mix, ids, times, skew,
** strings, determinism by seed, pacing and bounds, and the errors at open
** for a table the generator cannot fill.
**
** Each test declares a table through the public API (so the catalog checks
** its options as a user's script would), opens the source on the table's
** physical columns — the scan's schema — and reads rows as the scan does.
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/dipper_int.h"
#include "connectors/connector.h"
#include "core/vector.h"
#include "test.h"

extern const dp_source_class dp_source_nexmark;

#define NEXMARK_COLUMNS                                                                   \
  "event_type INT,"                                                                       \
  "person ROW<id BIGINT, name STRING, emailAddress STRING, creditCard STRING,"            \
  "  city STRING, state STRING, dateTime TIMESTAMP(3), extra STRING>,"                    \
  "auction ROW<id BIGINT, itemName STRING, description STRING, initialBid BIGINT,"        \
  "  reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT,"         \
  "  category BIGINT, extra STRING>,"                                                     \
  "bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,"       \
  "  dateTime TIMESTAMP(3), extra STRING>,"                                               \
  "dateTime AS CASE WHEN event_type = 0 THEN person.dateTime"                             \
  "  WHEN event_type = 1 THEN auction.dateTime ELSE bid.dateTime END,"                    \
  "WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND"

/* 2015-07-15 00:00:00 UTC in µs: the generator's base time. */
#define BASE_US INT64_C(1436918400000000)

/* An open source over one table, with everything it borrows. */
typedef struct fixture {
  dipper *db;
  dp_arena *arena;
  dp_diags diags;
  dp_schema scan;
  dp_source src;
  int open_rc;
} fixture;

/* Declare `create` (a CREATE TABLE of `nx`) and open the source on it. */
static void open_fixture(fixture *f, const char *create) {
  memset(f, 0, sizeof *f);
  CHECK_EQ(dipper_open(&f->db, NULL), DIPPER_OK);
  dipper_program *prog = NULL;
  int rc = dipper_compile(f->db, create, (size_t)-1, "test.sql", &prog);
  if (rc != DIPPER_OK) fprintf(stderr, "compile: %s\n", dipper_errmsg(f->db));
  CHECK_EQ(rc, DIPPER_OK);
  dipper_program_free(prog);
  const dp_table_def *t = dp_catalog_table(f->db->catalog, "nx");
  CHECK(t != NULL);
  f->arena = dp_arena_new(0);
  dp_diags_init(&f->diags, f->arena, "test.sql", create, strlen(create));
  if (!t) {
    f->open_rc = DIPPER_INTERNAL;
    return;
  }
  /* The scan's schema: the physical columns in declared order. */
  f->scan.cols = dp_arena_calloc(f->arena, (size_t)t->schema.ncols, sizeof(dp_field));
  for (int i = 0; i < t->schema.ncols; i++)
    if (t->cols[i].kind == DP_CK_PHYSICAL) f->scan.cols[f->scan.ncols++] = t->schema.cols[i];
  f->src.cls = &dp_source_nexmark;
  f->src.db = f->db;
  f->src.table = t;
  f->src.schema = &f->scan;
  f->src.diags = &f->diags;
  f->open_rc = f->src.cls->open(&f->src);
}

static void close_fixture(fixture *f) {
  if (f->open_rc == DIPPER_OK) f->src.cls->close(&f->src);
  dp_arena_free(f->arena);
  dipper_close(f->db);
}

static const char *first_message(const fixture *f) {
  return f->diags.count ? f->diags.items[0].message : "";
}

/* Plan one batch of at most max_rows and read all of it in chunks of
** `chunk` rows into one batch the caller frees. */
static dp_batch *read_batch(fixture *f, int64_t max_rows, int64_t chunk, bool *exhausted) {
  bool ex = false;
  CHECK_EQ(f->src.cls->plan_batch(&f->src, max_rows, &ex), DIPPER_OK);
  if (exhausted) *exhausted = ex;
  dp_batch *b = dp_batch_new(&f->scan, 0);
  bool done = false;
  for (int guard = 0; !done && guard < 100000; guard++) {
    CHECK_EQ(f->src.cls->read(&f->src, b, chunk, &done), DIPPER_OK);
    CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  }
  CHECK(done);
  CHECK_EQ(f->src.cls->commit(&f->src), DIPPER_OK);
  return b;
}

static const char *standard_table(const char *options) {
  static char sql[4096];
  snprintf(sql, sizeof sql, "CREATE TABLE nx (" NEXMARK_COLUMNS ") WITH ('connector' = 'nexmark'%s)",
           options);
  return sql;
}

/* Column c of the standard layout: 0 event_type, 1 person, 2 auction, 3 bid. */
static const dp_vector *field(const dp_batch *b, int col, int fieldno) {
  return b->cols[col]->children[fieldno];
}

static bool str_is(const dp_vector *v, int64_t i, const char *s) {
  size_t n;
  const char *p = dp_vector_get_str(v, i, &n);
  return n == strlen(s) && memcmp(p, s, n) == 0;
}

static bool vectors_equal(const dp_vector *a, const dp_vector *b) {
  if (a->length != b->length || a->null_count != b->null_count || a->phys != b->phys) return false;
  for (int64_t i = 0; i < a->length; i++) {
    if (dp_vector_is_null(a, i) != dp_vector_is_null(b, i)) return false;
    if (dp_vector_is_null(a, i)) continue;
    if (a->phys == DP_PHYS_VARBIN) {
      size_t na, nb;
      const char *pa = dp_vector_get_str(a, i, &na), *pb = dp_vector_get_str(b, i, &nb);
      if (na != nb || memcmp(pa, pb, na) != 0) return false;
    } else if (a->phys != DP_PHYS_STRUCT && dp_vector_get_i64(a, i) != dp_vector_get_i64(b, i)) {
      return false;
    }
  }
  for (int c = 0; c < a->nchildren; c++)
    if (!vectors_equal(a->children[c], b->children[c])) return false;
  return true;
}

static bool batches_equal(const dp_batch *a, const dp_batch *b) {
  if (a->nrows != b->nrows || a->ncols != b->ncols) return false;
  for (int c = 0; c < a->ncols; c++)
    if (!vectors_equal(a->cols[c], b->cols[c])) return false;
  return true;
}

TEST(registered_under_its_name) {
  CHECK(dp_source_find("nexmark") == &dp_source_nexmark);
  CHECK(dp_source_find("NEXMARK") == &dp_source_nexmark);
}

TEST(mix_of_1_3_46_with_kinds_and_nulls_agreeing) {
  fixture f;
  open_fixture(&f, standard_table(", 'events.num' = '50000'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  bool exhausted = false;
  dp_batch *b = read_batch(&f, 0, 4096, &exhausted);
  CHECK(exhausted);
  CHECK_EQ(b->nrows, 50000);
  int64_t count[3] = {0, 0, 0};
  bool agree = true;
  for (int64_t i = 0; i < b->nrows; i++) {
    int64_t k = dp_vector_get_i64(b->cols[0], i);
    CHECK(k >= 0 && k <= 2);
    if (k < 0 || k > 2) break;
    count[k]++;
    /* id % 50: 0 person, 1-3 auction, else bid */
    int64_t expect = i % 50 == 0 ? 0 : i % 50 < 4 ? 1 : 2;
    if (k != expect) agree = false;
    for (int c = 1; c <= 3; c++) {
      bool is_null = dp_vector_is_null(b->cols[c], i);
      if (is_null != (k != c - 1)) agree = false;
      /* a field of a null ROW is null as well */
      for (int j = 0; j < b->cols[c]->nchildren; j++)
        if (dp_vector_is_null(b->cols[c]->children[j], i) != is_null) agree = false;
    }
  }
  CHECK(agree);
  CHECK_EQ(count[0], 1000);
  CHECK_EQ(count[1], 3000);
  CHECK_EQ(count[2], 46000);
  CHECK_EQ(b->cols[1]->null_count, 49000);
  CHECK_EQ(b->cols[3]->null_count, 4000);
  CHECK_EQ(f.src.metrics.rows, 50000);
  CHECK(f.src.metrics.bytes > 50000 * 100);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(other_proportions) {
  fixture f;
  open_fixture(&f, standard_table(", 'events.num' = '4000', 'person.proportion' = '1', "
                                  "'auction.proportion' = '1', 'bid.proportion' = '2'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  dp_batch *b = read_batch(&f, 0, 1000, NULL);
  int64_t count[3] = {0, 0, 0};
  for (int64_t i = 0; i < b->nrows; i++) count[dp_vector_get_i64(b->cols[0], i) % 3]++;
  CHECK_EQ(count[0], 1000);
  CHECK_EQ(count[1], 1000);
  CHECK_EQ(count[2], 2000);
  /* the 2nd event of each group of 4 is an auction: auction k is event 4k+1 */
  CHECK_EQ(dp_vector_get_i64(field(b, 2, 0), 4 * 7 + 1), 1000 + 7);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(ids_follow_the_events_and_references_stay_in_range) {
  fixture f;
  open_fixture(&f, standard_table(", 'events.num' = '100000'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  dp_batch *b = read_batch(&f, 0, 4096, NULL);
  int64_t persons = 0, auctions = 0;
  bool ok_person = true, ok_auction = true, ok_bid = true, ok_prices = true;
  for (int64_t i = 0; i < b->nrows; i++) {
    switch (dp_vector_get_i64(b->cols[0], i)) {
    case 0:
      /* the k-th person has id 1000 + k */
      if (dp_vector_get_i64(field(b, 1, 0), i) != 1000 + persons) ok_person = false;
      persons++;
      break;
    case 1: {
      if (dp_vector_get_i64(field(b, 2, 0), i) != 1000 + auctions) ok_auction = false;
      auctions++;
      int64_t initial = dp_vector_get_i64(field(b, 2, 3), i);
      int64_t reserve = dp_vector_get_i64(field(b, 2, 4), i);
      int64_t when = dp_vector_get_i64(field(b, 2, 5), i);
      int64_t expires = dp_vector_get_i64(field(b, 2, 6), i);
      int64_t seller = dp_vector_get_i64(field(b, 2, 7), i);
      int64_t category = dp_vector_get_i64(field(b, 2, 8), i);
      if (initial < 100 || initial > 100000000 || reserve <= initial) ok_prices = false;
      if (expires <= when) ok_auction = false;
      /* a seller has been born, or is one of the next 10 */
      if (seller < 1000 || seller >= 1000 + persons + 10) ok_auction = false;
      if (category < 10 || category > 14) ok_auction = false;
      break;
    }
    default: {
      int64_t auction = dp_vector_get_i64(field(b, 3, 0), i);
      int64_t bidder = dp_vector_get_i64(field(b, 3, 1), i);
      int64_t price = dp_vector_get_i64(field(b, 3, 2), i);
      if (auction < 1000 || auction >= 1000 + auctions + 10) ok_bid = false;
      if (auction < 1000 + auctions - 1 - 100 && (auction - 1000) % 100 != 0) ok_bid = false;
      if (bidder < 1000 || bidder >= 1000 + persons + 10) ok_bid = false;
      if (price < 100 || price > 100000000) ok_prices = false;
      break;
    }
    }
  }
  CHECK(ok_person);
  CHECK(ok_auction);
  CHECK(ok_bid);
  CHECK(ok_prices);
  CHECK_EQ(persons, 2000);
  CHECK_EQ(auctions, 6000);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(event_time_advances_by_a_fixed_delay) {
  fixture f;
  /* No rate: spaced as at 10,000 events/s, 10 events per ms. */
  open_fixture(&f, standard_table(", 'events.num' = '20000'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  dp_batch *b = read_batch(&f, 0, 3000, NULL);
  bool exact = true, monotone = true;
  int64_t last = INT64_MIN;
  for (int64_t i = 0; i < b->nrows; i++) {
    int k = (int)dp_vector_get_i64(b->cols[0], i);
    int64_t ts = dp_vector_get_i64(field(b, k + 1, k == 0 ? 6 : k == 1 ? 5 : 5), i);
    if (ts != BASE_US + (i / 10) * 1000) exact = false;
    if (ts < last) monotone = false;
    last = ts;
  }
  CHECK(exact);
  CHECK(monotone);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(rate_spaces_event_time_and_paces_generation) {
  fixture f;
  open_fixture(&f, standard_table(", 'rate' = '200000'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  bool exhausted = true;
  /* The first plan starts the clock: hardly anything is due yet. */
  dp_batch *b = read_batch(&f, 0, 4096, &exhausted);
  CHECK(!exhausted);
  CHECK(b->nrows < 2000);
  dp_batch_free(b);
  struct timespec pause = {0, 30 * 1000 * 1000};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  nanosleep(&pause, NULL);
  b = read_batch(&f, 0, 4096, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  /* 30 ms at 200,000/s is 6000 events; at most what the clock allows */
  CHECK(b->nrows >= 5000);
  CHECK(b->nrows <= (int64_t)(200000 * (elapsed + 0.05)) + 2000);
  /* 200 events per ms of event time */
  int64_t total = f.src.metrics.rows;
  int64_t i = b->nrows - 1, id = total - 1;
  int k = (int)dp_vector_get_i64(b->cols[0], i);
  CHECK_EQ(dp_vector_get_i64(field(b, k + 1, k == 0 ? 6 : 5), i), BASE_US + id / 200 * 1000);
  dp_batch_free(b);
  /* max_rows caps a batch */
  nanosleep(&pause, NULL);
  b = read_batch(&f, 100, 4096, NULL);
  CHECK_EQ(b->nrows, 100);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(bounded_in_capped_batches) {
  fixture f;
  open_fixture(&f, standard_table(", 'number-of-events' = '1000'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  int64_t total = 0;
  int plans = 0;
  bool exhausted = false;
  while (!exhausted && plans < 10) {
    dp_batch *b = read_batch(&f, 300, 128, &exhausted);
    total += b->nrows;
    plans++;
    dp_batch_free(b);
  }
  CHECK(exhausted);
  CHECK_EQ(plans, 4);
  CHECK_EQ(total, 1000);
  /* nothing more, ever */
  dp_batch *b = read_batch(&f, 300, 128, &exhausted);
  CHECK(exhausted);
  CHECK_EQ(b->nrows, 0);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(deterministic_by_seed_whatever_the_chunking) {
  fixture a, b, c;
  open_fixture(&a, standard_table(", 'events.num' = '20000', 'seed' = '7'"));
  open_fixture(&b, standard_table(", 'events.num' = '20000', 'seed' = '7'"));
  open_fixture(&c, standard_table(", 'events.num' = '20000', 'seed' = '8'"));
  CHECK_EQ(a.open_rc + b.open_rc + c.open_rc, DIPPER_OK);
  dp_batch *ba = read_batch(&a, 0, 4096, NULL);
  /* b reads the same events in odd-sized chunks and several batches: a
  ** restart at any offset gives the same rows */
  dp_batch *bb = dp_batch_new(&b.scan, 0);
  for (int round = 0; round < 7; round++) {
    bool ex = false, done = false;
    CHECK_EQ(b.src.cls->plan_batch(&b.src, 3001, &ex), DIPPER_OK);
    while (!done) {
      CHECK_EQ(b.src.cls->read(&b.src, bb, 333, &done), DIPPER_OK);
      CHECK_EQ(dp_batch_sync(bb), DIPPER_OK);
    }
    CHECK_EQ(b.src.cls->commit(&b.src), DIPPER_OK);
  }
  dp_batch *bc = read_batch(&c, 0, 4096, NULL);
  CHECK_EQ(bb->nrows, 20000);
  CHECK(batches_equal(ba, bb));
  CHECK(!batches_equal(ba, bc));
  /* the kinds and ids do not depend on the seed; prices do */
  CHECK(vectors_equal(ba->cols[0], bc->cols[0]));
  CHECK(!vectors_equal(field(ba, 3, 2), field(bc, 3, 2)));
  dp_batch_free(ba);
  dp_batch_free(bb);
  dp_batch_free(bc);
  close_fixture(&a);
  close_fixture(&b);
  close_fixture(&c);
}

TEST(a_subset_of_fields_in_any_order_gives_the_same_values) {
  fixture full, part;
  open_fixture(&full, standard_table(", 'events.num' = '5000', 'seed' = '3'"));
  open_fixture(&part, "CREATE TABLE nx (bid ROW<price BIGINT, dateTime TIMESTAMP(3), "
                      "auction INT>, event_type BIGINT) "
                      "WITH ('connector' = 'nexmark', 'events.num' = '5000', 'seed' = '3')");
  CHECK_EQ(full.open_rc, DIPPER_OK);
  CHECK_EQ(part.open_rc, DIPPER_OK);
  dp_batch *a = read_batch(&full, 0, 4096, NULL);
  dp_batch *b = read_batch(&part, 0, 1024, NULL);
  CHECK_EQ(b->nrows, 5000);
  bool same = true;
  for (int64_t i = 0; i < a->nrows && i < b->nrows; i++) {
    if (dp_vector_get_i64(a->cols[0], i) != dp_vector_get_i64(b->cols[1], i)) same = false;
    if (dp_vector_is_null(a->cols[3], i) != dp_vector_is_null(b->cols[0], i)) same = false;
    if (dp_vector_is_null(a->cols[3], i)) continue;
    if (dp_vector_get_i64(field(a, 3, 2), i) != dp_vector_get_i64(field(b, 0, 0), i)) same = false;
    if (dp_vector_get_i64(field(a, 3, 5), i) != dp_vector_get_i64(field(b, 0, 1), i)) same = false;
    if (dp_vector_get_i64(field(a, 3, 0), i) != dp_vector_get_i64(field(b, 0, 2), i)) same = false;
  }
  CHECK(same);
  dp_batch_free(a);
  dp_batch_free(b);
  close_fixture(&full);
  close_fixture(&part);
}

TEST(hot_sellers_auctions_and_bidders) {
  fixture f;
  open_fixture(&f, standard_table(", 'events.num' = '200000', 'seed' = '11'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  dp_batch *b = read_batch(&f, 0, 4096, NULL);
  int64_t bids = 0, hot_auction = 0, hot_bidder = 0, auctions = 0, hot_seller = 0;
  /* how many bids the busiest auction got, against the average */
  int64_t *per_auction = calloc(10000, sizeof *per_auction);
  for (int64_t i = 0; i < b->nrows; i++) {
    int64_t k = dp_vector_get_i64(b->cols[0], i);
    if (k == 1) {
      auctions++;
      hot_seller += (dp_vector_get_i64(field(b, 2, 7), i) - 1000) % 100 == 0;
    } else if (k == 2) {
      bids++;
      int64_t a = dp_vector_get_i64(field(b, 3, 0), i);
      hot_auction += (a - 1000) % 100 == 0;
      hot_bidder += (dp_vector_get_i64(field(b, 3, 1), i) - 1000) % 100 == 1;
      if (a - 1000 >= 0 && a - 1000 < 10000) per_auction[a - 1000]++;
    }
  }
  double share_auction = (double)hot_auction / (double)bids;
  double share_bidder = (double)hot_bidder / (double)bids;
  double share_seller = (double)hot_seller / (double)auctions;
  /* half the bids go to a hot auction, 3/4 to hot bidders and sellers
  ** (plus the few recent ids that happen to be hot ones) */
  CHECK(share_auction > 0.48 && share_auction < 0.56);
  CHECK(share_bidder > 0.73 && share_bidder < 0.78);
  CHECK(share_seller > 0.72 && share_seller < 0.79);
  int64_t busiest = 0, with_bids = 0;
  for (int i = 0; i < 10000; i++) {
    if (per_auction[i] > busiest) busiest = per_auction[i];
    with_bids += per_auction[i] > 0;
  }
  CHECK(with_bids > 0);
  /* a hot auction takes half the bids of its time: about 50 times the
  ** average auction */
  if (with_bids > 0) CHECK(busiest > 20 * (bids / with_bids));
  free(per_auction);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(strings_look_like_nexmark) {
  fixture f;
  open_fixture(&f, standard_table(", 'events.num' = '100000', 'seed' = '5'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  dp_batch *b = read_batch(&f, 0, 4096, NULL);
  static const char *const hot[] = {"Google", "Facebook", "Baidu", "Apple"};
  int64_t bids = 0, hot_bids = 0, persons = 0, auctions = 0;
  int64_t bid_bytes = 0, person_bytes = 0, auction_bytes = 0;
  bool ok_channel = true, ok_person = true, ok_url = true;
  char google_url[256] = "";
  for (int64_t i = 0; i < b->nrows; i++) {
    int64_t k = dp_vector_get_i64(b->cols[0], i);
    size_t n;
    if (k == 0) {
      persons++;
      const char *p = dp_vector_get_str(field(b, 1, 3), i, &n); /* creditCard */
      if (n != 19 || p[4] != ' ' || p[9] != ' ' || p[14] != ' ') ok_person = false;
      p = dp_vector_get_str(field(b, 1, 2), i, &n); /* emailAddress */
      if (n < 11 || !memchr(p, '@', n) || memcmp(p + n - 4, ".com", 4) != 0) ok_person = false;
      p = dp_vector_get_str(field(b, 1, 1), i, &n); /* name: "First Last" */
      if (!memchr(p, ' ', n)) ok_person = false;
      p = dp_vector_get_str(field(b, 1, 5), i, &n); /* state */
      if (n != 2 || p[0] < 'A' || p[0] > 'Z') ok_person = false;
      int64_t size = 8 + 8;
      for (int j = 1; j <= 5; j++) size += (int64_t)(dp_vector_get_str(field(b, 1, j), i, &n), n);
      person_bytes += size + (int64_t)(dp_vector_get_str(field(b, 1, 7), i, &n), n);
    } else if (k == 1) {
      auctions++;
      int64_t size = 8 + 6 * 8;
      size += (int64_t)(dp_vector_get_str(field(b, 2, 1), i, &n), n);
      size += (int64_t)(dp_vector_get_str(field(b, 2, 2), i, &n), n);
      auction_bytes += size + (int64_t)(dp_vector_get_str(field(b, 2, 9), i, &n), n);
    } else {
      bids++;
      const dp_vector *ch = field(b, 3, 3), *url = field(b, 3, 4);
      bool is_hot = false;
      for (int h = 0; h < 4; h++) is_hot |= str_is(ch, i, hot[h]);
      hot_bids += is_hot;
      const char *p = dp_vector_get_str(ch, i, &n);
      if (!is_hot && (n < 9 || memcmp(p, "channel-", 8) != 0 || n > 12)) ok_channel = false;
      const char *u = dp_vector_get_str(url, i, &n);
      if (n < 24 || memcmp(u, "https://www.nexmark.com/", 24) != 0) ok_url = false;
      /* a channel always has the same URL */
      if (str_is(ch, i, "Google") && n < sizeof google_url) {
        if (!google_url[0])
          memcpy(google_url, u, n), google_url[n] = '\0';
        else if (!str_is(url, i, google_url))
          ok_url = false;
      }
      bid_bytes += 4 * 8 + (int64_t)(dp_vector_get_str(field(b, 3, 6), i, &n), n);
    }
  }
  CHECK(ok_person);
  CHECK(ok_channel);
  CHECK(ok_url);
  CHECK(google_url[0] != '\0');
  double share_hot = (double)hot_bids / (double)bids;
  CHECK(share_hot > 0.48 && share_hot < 0.52);
  /* extra pads events to about 200 / 500 / 100 bytes */
  double avg_person = (double)person_bytes / (double)persons;
  double avg_auction = (double)auction_bytes / (double)auctions;
  double avg_bid = (double)bid_bytes / (double)bids;
  CHECK(avg_person > 190 && avg_person < 210);
  CHECK(avg_auction > 480 && avg_auction < 520);
  CHECK(avg_bid > 95 && avg_bid < 105);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(unknown_column_is_refused_at_open) {
  fixture f;
  open_fixture(&f, "CREATE TABLE nx (event_type INT, price BIGINT) "
                   "WITH ('connector' = 'nexmark')");
  CHECK_EQ(f.open_rc, DIPPER_NAME);
  CHECK_CONTAINS(first_message(&f), "no column `price`");
  CHECK_CONTAINS(first_message(&f), "computed column");
  close_fixture(&f);
}

TEST(unknown_field_is_refused_at_open) {
  fixture f;
  open_fixture(&f, "CREATE TABLE nx (bid ROW<auction BIGINT, amount BIGINT>) "
                   "WITH ('connector' = 'nexmark')");
  CHECK_EQ(f.open_rc, DIPPER_NAME);
  CHECK_CONTAINS(first_message(&f), "no field `amount`");
  CHECK_CONTAINS(first_message(&f), "auction, bidder, price, channel, url, dateTime, extra");
  close_fixture(&f);
}

TEST(wrong_types_are_refused_at_open) {
  fixture f;
  open_fixture(&f, "CREATE TABLE nx (person ROW<id STRING>) WITH ('connector' = 'nexmark')");
  CHECK_EQ(f.open_rc, DIPPER_TYPE);
  CHECK_CONTAINS(first_message(&f), "`person.id`");
  CHECK_CONTAINS(first_message(&f), "declare it BIGINT");
  close_fixture(&f);
  open_fixture(&f, "CREATE TABLE nx (auction BIGINT) WITH ('connector' = 'nexmark')");
  CHECK_EQ(f.open_rc, DIPPER_TYPE);
  CHECK_CONTAINS(first_message(&f), "must be a ROW");
  close_fixture(&f);
}

TEST(all_proportions_zero_is_refused) {
  fixture f;
  open_fixture(&f, standard_table(", 'person.proportion' = '0', 'auction.proportion' = '0', "
                                  "'bid.proportion' = '0'"));
  CHECK_EQ(f.open_rc, DIPPER_OPTION);
  CHECK_CONTAINS(first_message(&f), "are all 0");
  close_fixture(&f);
}

/* Nexmark's own options, with the meaning they have in the Nexmark
** project's generator. */
TEST(first_event_rate_spaces_time_without_pacing) {
  fixture f;
  /* 1000 events/s: 1 ms apart in event time; made at once (max-emit-speed
  ** is Nexmark's default), so the first plan has all of them */
  open_fixture(&f, standard_table(", 'first-event.rate' = '1000', 'next-event.rate' = '500', "
                                  "'events.num' = '30000'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  bool exhausted = false;
  dp_batch *b = read_batch(&f, 0, 4096, &exhausted);
  CHECK(exhausted);
  CHECK_EQ(b->nrows, 30000);
  int64_t i = b->nrows - 1;
  int k = (int)dp_vector_get_i64(b->cols[0], i);
  CHECK_EQ(dp_vector_get_i64(field(b, k + 1, k == 0 ? 6 : 5), i), BASE_US + i * 1000);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(max_emit_speed_false_paces_by_event_time) {
  fixture f;
  open_fixture(&f, standard_table(", 'first-event.rate' = '100000', 'max-emit-speed' = 'false'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  dp_batch *b = read_batch(&f, 0, 4096, NULL);
  CHECK(b->nrows < 2000);
  dp_batch_free(b);
  struct timespec pause = {0, 30 * 1000 * 1000};
  nanosleep(&pause, NULL);
  b = read_batch(&f, 0, 4096, NULL);
  /* 30 ms at 100,000/s is 3000 events */
  CHECK(b->nrows >= 2500);
  CHECK(b->nrows < 100000);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(events_num_zero_is_unbounded) {
  fixture f;
  open_fixture(&f, standard_table(", 'events.num' = '0'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  CHECK(!f.src.table->bounded);
  bool exhausted = true;
  dp_batch *b = read_batch(&f, 5000, 4096, &exhausted);
  CHECK(!exhausted);
  CHECK_EQ(b->nrows, 5000);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(hot_ratios_and_avg_sizes) {
  fixture f;
  /* ratio 1: never hot; ratio 10: hot 9 times in 10 */
  open_fixture(&f, standard_table(", 'events.num' = '100000', 'bid.hot-ratio.auctions' = '1', "
                                  "'bid.hot-ratio.bidders' = '10', 'auction.hot-ratio.sellers' = "
                                  "'1', 'bid.avg-size' = '1kb', 'person.avg-size' = '50'"));
  CHECK_EQ(f.open_rc, DIPPER_OK);
  dp_batch *b = read_batch(&f, 0, 4096, NULL);
  int64_t bids = 0, hot_bidder = 0, bid_extra = 0, persons = 0, person_extra = 0;
  for (int64_t i = 0; i < b->nrows; i++) {
    int64_t k = dp_vector_get_i64(b->cols[0], i);
    size_t n;
    if (k == 0) {
      persons++;
      dp_vector_get_str(field(b, 1, 7), i, &n);
      person_extra += (int64_t)n;
    } else if (k == 2) {
      bids++;
      hot_bidder += (dp_vector_get_i64(field(b, 3, 1), i) - 1000) % 100 == 1;
      dp_vector_get_str(field(b, 3, 6), i, &n);
      bid_extra += (int64_t)n;
    }
  }
  double share_bidder = (double)hot_bidder / (double)bids;
  CHECK(share_bidder > 0.88 && share_bidder < 0.93);
  /* a bid is 32 bytes of numbers, padded to about 1024 */
  double avg_bid_extra = (double)bid_extra / (double)bids;
  CHECK(avg_bid_extra > 960 && avg_bid_extra < 1020);
  /* a person's fields already pass 50 bytes: no padding */
  CHECK(persons > 0);
  CHECK_EQ(person_extra, 0);
  dp_batch_free(b);
  close_fixture(&f);
}

TEST(nexmark_option_values_are_checked) {
  static const char *const bad[][2] = {
      {", 'bid.avg-size' = '20 gb'", "is not a size"},
      {", 'bid.hot-ratio.auctions' = '0'", "is not a ratio"},
      {", 'rate' = '10', 'first-event.rate' = '10'", "keep one"},
      {", 'next-event.rate' = '0'", "positive number"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    fixture f;
    open_fixture(&f, standard_table(bad[i][0]));
    CHECK_EQ(f.open_rc, DIPPER_OPTION);
    CHECK_CONTAINS(first_message(&f), bad[i][1]);
    close_fixture(&f);
  }
}

/* ---- through the engine ---- */

/* Compile and run `sql` on a fresh handle; the memory table `out` is
** fetched into *schema / *array (the caller releases them). */
static int run_and_fetch(const char *sql, dipper **db, struct ArrowSchema *schema,
                         struct ArrowArray *array) {
  CHECK_EQ(dipper_open(db, NULL), DIPPER_OK);
  dipper_program *prog = NULL;
  int rc = dipper_compile(*db, sql, (size_t)-1, "test.sql", &prog);
  if (rc == DIPPER_OK) rc = dipper_run(prog, NULL, NULL);
  if (rc != DIPPER_OK) fprintf(stderr, "run: %s\n", dipper_errmsg(*db));
  dipper_program_free(prog);
  if (rc == DIPPER_OK) rc = dipper_memory_fetch(*db, "out", schema, array);
  return rc;
}

static int64_t arrow_int(const struct ArrowArray *col, int64_t i, int width) {
  const void *values = col->buffers[1];
  int64_t at = col->offset + i;
  return width == 4 ? ((const int32_t *)values)[at] : ((const int64_t *)values)[at];
}

TEST(engine_counts_the_mix_in_batch_mode) {
  char sql[4096];
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';\n"
           "CREATE TABLE nx (" NEXMARK_COLUMNS ") WITH ('connector' = 'nexmark', "
           "'events.num' = '50000');\n"
           "CREATE TABLE out (event_type INT, n BIGINT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT event_type, COUNT(*) FROM nx GROUP BY event_type;\n");
  dipper *db = NULL;
  struct ArrowSchema schema;
  struct ArrowArray array;
  CHECK_EQ(run_and_fetch(sql, &db, &schema, &array), DIPPER_OK);
  if (array.release) {
    CHECK_EQ(array.length, 3);
    CHECK_EQ(array.n_children, 2);
    int64_t count[3] = {0, 0, 0};
    for (int64_t i = 0; i < array.length && array.n_children == 2; i++) {
      int64_t k = arrow_int(array.children[0], i, 4);
      if (k >= 0 && k <= 2) count[k] = arrow_int(array.children[1], i, 8);
    }
    CHECK_EQ(count[0], 1000);
    CHECK_EQ(count[1], 3000);
    CHECK_EQ(count[2], 46000);
    array.release(&array);
    schema.release(&schema);
  }
  dipper_close(db);
}

TEST(engine_hop_count_sees_every_bid_five_times) {
  /* The q5 core, streaming: each bid lies in 5 HOP windows (10 s sliding by
  ** 2 s), and the bounded run's last batch closes every window, so the
  ** counts add up to 5 x 18,400 bids; the generator is in order, so no row
  ** is late. */
  char sql[4096];
  snprintf(sql, sizeof sql,
           "CREATE TABLE nx (" NEXMARK_COLUMNS ") WITH ('connector' = 'nexmark', "
           "'events.num' = '20000');\n"
           "CREATE TABLE out (auction BIGINT, num BIGINT, window_start TIMESTAMP(3), "
           "window_end TIMESTAMP(3)) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT bid.auction, COUNT(*), window_start, window_end\n"
           "FROM TABLE(HOP(TABLE nx, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, "
           "INTERVAL '10' SECOND))\n"
           "WHERE event_type = 2 GROUP BY bid.auction, window_start, window_end;\n");
  dipper *db = NULL;
  struct ArrowSchema schema;
  struct ArrowArray array;
  CHECK_EQ(run_and_fetch(sql, &db, &schema, &array), DIPPER_OK);
  if (array.release) {
    CHECK_EQ(array.n_children, 4);
    int64_t total = 0;
    bool spans = true, ids = true;
    for (int64_t i = 0; i < array.length && array.n_children == 4; i++) {
      total += arrow_int(array.children[1], i, 8);
      int64_t start = arrow_int(array.children[2], i, 8), end = arrow_int(array.children[3], i, 8);
      if (end - start != 10 * INT64_C(1000000) || (start - BASE_US) % (2 * 1000000) != 0)
        spans = false;
      if (arrow_int(array.children[0], i, 8) < 1000) ids = false;
    }
    CHECK_EQ(total, 5 * 18400);
    CHECK(spans);
    CHECK(ids);
    CHECK(array.length > 100);
    array.release(&array);
    schema.release(&schema);
  }
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
