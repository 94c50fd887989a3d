--@include prelude
--@include owned-processing
--@include fail-record

return 1
