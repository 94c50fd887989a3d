--@include prelude
--@include owned-processing
--@include mark-queued-record
--@include let-go

return 1
