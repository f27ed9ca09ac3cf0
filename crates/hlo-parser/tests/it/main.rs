//! Integration tests of hlo-parser over the HLO modules in the real captures of `$TRACEWISE_TRACES/jax/`.

mod captures;

use std::path::Path;

pub use test_support::traces_dir;

/// One embedded HLO proto: the capture folder it came from, a label, and the `HloProto` bytes.
pub struct HloBytes {
    pub capture: String,
    pub label: String,
    pub bytes: Vec<u8>,
}

/// The HLO protos of every `*.xplane.pb` of `<traces>/jax/MANIFEST.md`, in folder order.
pub fn xplane_programs(traces: &Path) -> Vec<HloBytes> {
    let mut out = Vec::new();
    for capture in test_support::RealTraces::read(traces).xspaces {
        let space = xplane_reader::XSpace::read(&capture.path).unwrap();
        // The manifest's count of embedded modules, so none is missed below.
        assert_eq!(
            space.hlo_programs().len(),
            capture.hlo_programs,
            "{}: HLO programs",
            capture.path.display()
        );
        for program in space.hlo_programs() {
            out.push(HloBytes {
                capture: capture.folder.clone(),
                label: format!("{}: {}", capture.path.display(), program.name),
                bytes: program.hlo_proto.to_vec(),
            });
        }
    }
    out
}

/// The `dump/*.hlo.pb.xz` HloProtos inside the A100 nsys-jax zip.
pub fn a100_programs(traces: &Path) -> Vec<HloBytes> {
    let zip = traces.join("jax/nvidia-a100-nsys-jax-pax-fsdp4/pax_fsdp4_4proc_proc0.subset.zip");
    let archive = std::fs::read(&zip).unwrap_or_else(|err| panic!("{}: {err}", zip.display()));
    stored_zip_entries(&archive)
        .into_iter()
        .filter(|(name, _)| name.ends_with(".hlo.pb.xz"))
        .map(|(name, data)| {
            let mut bytes = Vec::new();
            lzma_rs::xz_decompress(&mut std::io::Cursor::new(data), &mut bytes)
                .unwrap_or_else(|err| panic!("{name}: {err:?}"));
            HloBytes {
                capture: "nvidia-a100-nsys-jax-pax-fsdp4".to_owned(),
                label: name,
                bytes,
            }
        })
        .collect()
}

/// Entries of a zip archive, stored (method 0) or deflated (method 8), read through the local
/// file headers in order; enough for this archive (`unzip -v` lists both methods, no descriptors).
fn stored_zip_entries(archive: &[u8]) -> Vec<(String, Vec<u8>)> {
    let u16_at = |at: usize| u16::from_le_bytes([archive[at], archive[at + 1]]) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(archive[at..at + 4].try_into().unwrap()) as usize;
    let mut entries = Vec::new();
    let mut pos = 0;
    while pos + 30 <= archive.len() && u32_at(pos) == 0x0403_4b50 {
        let flags = u16_at(pos + 6);
        let method = u16_at(pos + 8);
        let size = u32_at(pos + 18); // compressed size
        let name_len = u16_at(pos + 26);
        let extra_len = u16_at(pos + 28);
        assert_eq!(flags & 0x8, 0, "zip entry with a data descriptor");
        let name = String::from_utf8_lossy(&archive[pos + 30..pos + 30 + name_len]).into_owned();
        let start = pos + 30 + name_len + extra_len;
        let data = &archive[start..start + size];
        match method {
            0 => entries.push((name, data.to_vec())),
            8 => {
                let mut inflated = Vec::new();
                std::io::Read::read_to_end(
                    &mut flate2::read::DeflateDecoder::new(data),
                    &mut inflated,
                )
                .unwrap_or_else(|err| panic!("{name}: {err}"));
                entries.push((name, inflated));
            }
            other => panic!("{name}: zip method {other} not supported by this test"),
        }
        pos = start + size;
    }
    entries
}
