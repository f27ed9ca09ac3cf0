//! Opening trace files: plain or gzip JSON, decompressed on a second thread so that
//! inflating and parsing overlap.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::mpsc;

use crate::Error;

const CHUNK: usize = 1 << 20;

/// Opens `path` for reading as JSON text, transparently inflating gzip (detected by its
/// magic bytes, not by the file name).
pub fn open(path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    open_with(path, |decoder| Box::new(ThreadedReader::spawn(decoder)))
}

/// [`open`], but gzip is inflated on the thread that reads: for a reader that already has
/// a thread of its own (the model build's, see `chunks.rs`), which saves a thread and a
/// copy of the text.
pub(crate) fn open_unthreaded(path: &Path) -> Result<Box<dyn Read + Send>, Error> {
    open_with(path, |decoder| Box::new(decoder))
}

type GzInput = flate2::read::MultiGzDecoder<
    BufReader<io::Chain<io::Cursor<Vec<u8>>, crate::progress::Tracked<File>>>,
>;

fn open_with(
    path: &Path,
    wrap_gzip: impl FnOnce(GzInput) -> Box<dyn Read + Send>,
) -> Result<Box<dyn Read + Send>, Error> {
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        offset: 0,
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let size = file.metadata().map_or(0, |m| m.len());
    let mut file = crate::progress::track(path, size, file);
    let mut magic = [0u8; 2];
    let n = read_up_to(&mut file, &mut magic).map_err(io_err)?;
    let head = io::Cursor::new(magic[..n].to_vec());
    let input = head.chain(file);
    if n == 2 && magic == [0x1f, 0x8b] {
        let decoder = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(CHUNK, input));
        Ok(wrap_gzip(decoder))
    } else {
        Ok(Box::new(input))
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reads from an inner reader on a background thread, handing over 1 MiB chunks.
struct ThreadedReader {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
    done: bool,
}

impl ThreadedReader {
    fn spawn<R: Read + Send + 'static>(mut inner: R) -> Self {
        let (tx, rx) = mpsc::sync_channel(4);
        std::thread::spawn(move || {
            loop {
                let mut chunk = vec![0u8; CHUNK];
                let mut n = 0;
                // Fill the chunk; on an error, hand over what was read before it so that
                // the error's offset tells where the stream broke.
                let error = loop {
                    if n == chunk.len() {
                        break None;
                    }
                    match inner.read(&mut chunk[n..]) {
                        Ok(0) => break None,
                        Ok(k) => n += k,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break Some(e),
                    }
                };
                chunk.truncate(n);
                if n > 0 && tx.send(Ok(chunk)).is_err() {
                    return; // The reader was dropped.
                }
                if let Some(e) = error {
                    let _ = tx.send(Err(e));
                    return;
                }
                if n < CHUNK {
                    return;
                }
            }
        });
        ThreadedReader {
            rx,
            chunk: Vec::new(),
            pos: 0,
            done: false,
        }
    }
}

impl Read for ThreadedReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.chunk.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
