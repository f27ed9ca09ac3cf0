//! Fixtures: ok/ load, err/ give their expected error, odd/ give their diagnostics.
