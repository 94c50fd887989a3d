--@include prelude
--@include owned-processing-or-queued
--@include extend-record

return 1
