-- topn — Nexmark q19 as an update-mode Top-N: the ten highest bids of each
-- auction (ROW_NUMBER() ... <= 10 without a window, the rank emitted, upserts
-- keyed by auction and rank).  The tops are kept for ever, one per auction;
-- over RocksDB ('state.backend' = 'rocksdb') they are RocksDB entries behind
-- a write-back cache (exec/topn_rocks.c; docs/benchmarks.md, "The
-- update-mode Top-N over RocksDB").  Micro-batches of 10,000 rows, so that
-- the tops live across batches (one batch of everything would rank it all
-- in memory, whatever the backend).
SET 'dipper.max-batch-rows' = '10000';
SET 'dipper.output-mode' = 'update';
CREATE TABLE discard_sink (auction BIGINT, bidder BIGINT, price BIGINT, rn BIGINT)
WITH ('connector' = 'blackhole');

INSERT INTO discard_sink
SELECT auction, bidder, price, rn FROM (
  SELECT auction, bidder, price,
         ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn
  FROM bid)
WHERE rn <= 10;
