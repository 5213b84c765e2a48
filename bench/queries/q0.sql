-- q0 — pass-through: every bid, unchanged, into a sink that drops it.
-- Measures the source, the filter on event_type and the field accesses.
CREATE TABLE discard_sink (
  auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), extra VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO discard_sink
SELECT auction, bidder, price, dateTime, extra FROM bid;
