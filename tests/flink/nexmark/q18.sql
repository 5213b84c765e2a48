-- q18 find last bid: each bidder's last bid on each auction (deduplication, keep last).
-- @key 1 2
-- @differs batch: ties: at the default 10,000 events/s ten events share each millisecond, so a bidder can bid twice on an auction at one `dateTime`, and ROW_NUMBER ... ORDER BY `dateTime` DESC may pick either bid; Flink's batch sort and dipper break the tie differently (4 of 1043 rows at 5000 events). Not a bug of either
SELECT auction, bidder, price, channel, url, `dateTime`, extra
FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC) AS rank_number
      FROM bid)
WHERE rank_number <= 1;
