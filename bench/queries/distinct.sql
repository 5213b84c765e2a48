-- distinct — SELECT DISTINCT per TUMBLE window: the (bidder, auction) pairs of
-- each 10 s window, emitted when the watermark closes it.  Exercises the group
-- table of DISTINCT.
CREATE TABLE discard_sink (bidder BIGINT, auction BIGINT, window_start TIMESTAMP(3))
WITH ('connector' = 'blackhole');

INSERT INTO discard_sink
SELECT DISTINCT bidder, auction, window_start
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND));
