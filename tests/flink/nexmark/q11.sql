-- q11 user sessions: bids per bidder per session (10 s gap), the legacy GROUP BY SESSION form.
-- @differs batch: Flink 2.3 cannot plan the legacy GROUP BY SESSION(...) in batch mode over this source ("Cannot generate a valid execution plan"); dipper runs it, and in streaming mode the two agree
SELECT B.bidder, COUNT(*) AS bid_count,
       SESSION_START(B.`dateTime`, INTERVAL '10' SECOND) AS starttime,
       SESSION_END(B.`dateTime`, INTERVAL '10' SECOND) AS endtime
FROM bid B
GROUP BY B.bidder, SESSION(B.`dateTime`, INTERVAL '10' SECOND);
