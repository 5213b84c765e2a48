-- q13 bounded side input join: each bid with the side input's value for its auction.
-- The side input file (key, value for keys 0..9999) is written by the runner: ${SIDE_INPUT}.
-- @modes streaming
-- Both engines refuse it over a file: dipper because in its streaming mode a file table is a
-- watched folder (a temporal join needs the stream of rows on the left), Flink because a
-- temporal join with a filesystem table needs a primary key (the published query reads a
-- legacy connector.type table).
CREATE TABLE side_input (key BIGINT, `value` VARCHAR)
WITH ('connector' = 'filesystem', 'path' = '${SIDE_INPUT}', 'format' = 'csv');
SELECT B.auction, B.bidder, B.price, B.`dateTime`, S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 10000) = S.key;
