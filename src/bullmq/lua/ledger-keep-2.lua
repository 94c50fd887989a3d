-- KEYS: the part's jobs hash and since set. ARGV: id, data, epoch ms.
--@include keep
return 1