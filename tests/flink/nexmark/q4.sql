-- q4 average price for a category: an aggregation of the winning bids.
-- @differs batch streaming: AVG of a BIGINT is a BIGINT in Flink (the quotient truncated), a DOUBLE in dipper as in Spark (docs/sql.md, differences)
SELECT Q.category, AVG(Q.final)
FROM (
  SELECT MAX(B.price) AS final, A.category
  FROM auction A, bid B
  WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires
  GROUP BY A.id, A.category
) Q
GROUP BY Q.category;
