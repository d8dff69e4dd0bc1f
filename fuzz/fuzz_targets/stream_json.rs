//! The stream-json parser and what the session layer makes of each line: any text, split into
//! lines, never panics, and every line is kept raw.
#![no_main]

use hld::session::transcript::Transcript;
use hld::store::Ingest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut transcript = Transcript::new();
    let mut batch = Ingest::default();
    for line in text.lines() {
        transcript.apply_to(line, &mut batch);
    }
    assert_eq!(batch.raw_lines.len(), text.lines().count());
});
