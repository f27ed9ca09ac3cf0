//! Integration tests of the attribution crate.
