"""One function per workflow rule, named after it: ``(inputs, params) -> tables``.

:data:`evalbars.jobs.registry.JOBS` says which module holds each rule's job;
:mod:`evalbars.jobs.run` reads its inputs, calls it and writes what it returns."""
