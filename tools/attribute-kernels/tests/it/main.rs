//! End-to-end runs of the attribute-kernels binary.
