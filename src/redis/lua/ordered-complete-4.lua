--@include prelude
--@include before
--@include owned-processing
--@include complete-record
--@include advance-position
--@include leave-list
--@include let-go

return 1
