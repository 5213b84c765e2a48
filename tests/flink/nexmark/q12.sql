-- q12 processing-time windows: bids per bidder per 10 s of the wall clock.
-- @not-comparable: windows of processing time hold whatever arrived in each 10 s of the wall clock, which differs between any two runs
CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid;
SELECT bidder, COUNT(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
