--@include prelude
--@include owned-processing
--@include mark-queued-record

return 1
