//! analyze-profile: see the crate description.
fn main() {}
