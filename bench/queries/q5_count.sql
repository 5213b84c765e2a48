-- q5_count — the windowed count at the core of Nexmark q5 ("hot items"):
-- bids per auction in HOP windows of 10 s sliding every 2 s, emitted once
-- the watermark passes each window's end (append mode).  The full q5 then
-- joins these counts with their per-window maximum.
CREATE TABLE discard_sink (
  auction BIGINT, num BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO discard_sink
SELECT auction, COUNT(*) AS num, window_start, window_end
FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;
