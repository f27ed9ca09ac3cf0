//! `investigate` reads each input once: the verdict, attribution and roofline share the
//! loader's captures, and an XSpace's HLO programs are decoded once, by the loader (no
//! other crate decodes them: `load`'s layer test keeps the readers below it).
//!
//! A test binary of its own: the loader's decode counter is per process.

#[test]
fn investigate_decodes_each_input_once() {
    let root = test_support::workspace_root();
    // A Kineto trace is decoded once too, but its roofline reads the file a second time
    // for the ops' `Input Dims` (arguments the model does not keep): not counted here.
    let input = "testdata/xplane/ok/small.xplane.pb";
    let before = load::decodes();
    let result = investigation::investigate(&root.join(input), &Default::default());
    assert!(result.is_ok(), "{input}: {:?}", result.err());
    assert_eq!(load::decodes() - before, 1, "{input}");
}
