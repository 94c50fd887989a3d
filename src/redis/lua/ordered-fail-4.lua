--@include prelude
--@include owned-processing
--@include fail-record
--@include leave-list
--@include let-go

return 1
