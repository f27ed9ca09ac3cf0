//! A frame as an Arrow C stream (`ArrowArrayStream`, the struct behind the Arrow PyCapsule
//! interface's `__arrow_c_stream__`), for the Python package: polars' own arrow export, so
//! the columns' buffers are handed over, not copied, and no second arrow library is built.

use polars::prelude::*;
use polars_arrow::array::{Array, StructArray};
use polars_arrow::datatypes::{ArrowDataType, Field as ArrowField};
pub use polars_arrow::ffi::ArrowArrayStream;

/// The frame as a stream of record batches (one per chunk), each a struct array of the
/// columns, with polars' newest arrow types (string and binary views).
pub fn arrow_stream(df: &DataFrame) -> ArrowArrayStream {
    let compat = CompatLevel::newest();
    let mut df = df.clone();
    // `iter_chunks` expects every column cut at the same rows.
    df.align_chunks_par();
    let fields: Vec<ArrowField> = df
        .columns()
        .iter()
        .map(|c| c.field().to_arrow(compat))
        .collect();
    let dtype = ArrowDataType::Struct(fields);
    let batches: Vec<PolarsResult<Box<dyn Array>>> = df
        .iter_chunks(compat, false)
        .map(|batch| {
            let len = batch.height();
            let arrays = batch.into_arrays();
            StructArray::try_new(dtype.clone(), len, arrays, None)
                .map(|a| Box::new(a) as Box<dyn Array>)
        })
        .collect();
    polars_arrow::ffi::export_iterator(
        Box::new(batches.into_iter()),
        ArrowField::new(PlSmallStr::EMPTY, dtype, false),
    )
}
