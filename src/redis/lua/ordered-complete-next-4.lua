-- ORDERED_COMPLETE, then, in the same step, ORDERED_NEXT for the runner that completed: the lane's
-- next waiting notification is handed over with the completion, not asked for in a command of its own.
-- ARGV: owner, answerJson, retentionMs (as ORDERED_COMPLETE), then the next claim's owner, leaseMs and
-- the record key prefix. Answers 0 (not this owner's, nothing changed), 1 (completed, no next waiting notification)
-- or the next waiting notification's claim as ORDERED_NEXT answers it.
--@include prelude
--@include before
--@include waiting
--@include take-next
--@include owned-processing
--@include complete-record
--@include advance-position
--@include leave-list
--@include let-go

local next = take_next(KEYS[2], KEYS[3], KEYS[4], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[3]), ARGV[6], KEYS[5])
if #next == 0 then return 1 end
return next
