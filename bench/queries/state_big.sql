-- state_big — one group per key: N keys, each seen once, a COUNT and a SUM
-- per group kept for ever (no window): the state grows to N groups.  The
-- checkpoint benchmark (nexmark_bench --checkpoint) measures what a
-- checkpoint of it costs and how long a restart takes to restore it.
CREATE TABLE keys_src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '1000000', 'seed' = '7',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '100000000000',
  'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE discard_sink (k BIGINT, n BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink SELECT k, COUNT(*), SUM(v) FROM keys_src GROUP BY k;
