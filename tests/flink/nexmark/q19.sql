-- q19 auction top-10 price: the ten highest bids of each auction.
-- @flink-upsert-key 1 8: where Flink sends the ranking as an upsert stream (+U without -U), its key is (auction, rank_number)
SELECT * FROM
(SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid)
WHERE rank_number <= 10;
