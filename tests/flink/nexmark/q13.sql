-- q13 bounded side input join: each bid with the side input's value for its auction.
-- The side input file (key, value for keys 0..9999) is written by the runner: ${SIDE_INPUT}.
-- @modes streaming
-- @differs streaming: Flink 2.3 refuses it ("Temporal Table Join requires primary key in versioned
-- table": the published query reads a legacy connector.type table, which has none); dipper runs it,
-- the file table being bounded in streaming mode as in Flink (no source.monitor-interval), so each
-- bid meets the side input's row for its key.
CREATE TABLE side_input (key BIGINT, `value` VARCHAR)
WITH ('connector' = 'filesystem', 'path' = '${SIDE_INPUT}', 'format' = 'csv');
SELECT B.auction, B.bidder, B.price, B.`dateTime`, S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 10000) = S.key;
