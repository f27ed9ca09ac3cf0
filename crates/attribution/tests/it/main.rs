//! Integration tests of the attribution crate (one binary): real JAX and PyTorch captures
//! (through `TRACEWISE_TRACES`) and the synthetic XSpace under `testdata/attribution/`.

mod jax;
mod ranges;
mod synth;
mod torch;
