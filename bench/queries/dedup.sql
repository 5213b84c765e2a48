-- dedup — the ROW_NUMBER() ... WHERE rn = 1 deduplication: each bidder's first
-- bid (by event time).  Exercises the per-key state of the deduplicate operator.
CREATE TABLE discard_sink (bidder BIGINT, auction BIGINT, price BIGINT, url STRING)
WITH ('connector' = 'blackhole');

INSERT INTO discard_sink
SELECT bidder, auction, price, url FROM (
  SELECT bidder, auction, price, url,
         ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY dateTime ASC) AS rn
  FROM bid)
WHERE rn = 1;
