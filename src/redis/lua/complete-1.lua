--@include prelude
--@include owned-processing
--@include complete-record

return 1
