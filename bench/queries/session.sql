-- session — Nexmark q11 ("user sessions"): bids per bidder in SESSION
-- windows of 10 s of inactivity, emitted once the watermark passes each
-- session's end (append mode).  Exercises the sessions kept per key and
-- merged as bids arrive.
CREATE TABLE discard_sink (
  bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO discard_sink
SELECT bidder, COUNT(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
