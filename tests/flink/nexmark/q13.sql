-- q13 bounded side input join: each bid with the side input's value for its auction.
-- The side input file (key, value for keys 0..9999) is written by the runner: ${SIDE_INPUT}.
-- @modes streaming
-- @dipper-refuses streaming: in streaming mode a filesystem table is a watched folder, an unbounded stream of versions, and dipper runs a temporal join only with the stream of rows on the left (Spark has no processing-time lookup join); Flink looks the key up in the file (docs/sql.md, differences)
CREATE TABLE side_input (key BIGINT, `value` VARCHAR)
WITH ('connector' = 'filesystem', 'path' = '${SIDE_INPUT}', 'format' = 'csv');
SELECT B.auction, B.bidder, B.price, B.`dateTime`, S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 10000) = S.key;
