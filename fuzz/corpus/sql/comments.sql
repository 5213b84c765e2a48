-- a comment
SELECT /* inline */ 1 -- trailing
;
SELECT 2;
