-- q0 pass-through: every bid.
SELECT auction, bidder, price, `dateTime`, extra FROM bid;
