//! `claude`'s output cut into lines (an over-long one kept cut, not whole), and its stderr tail.

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, BufReader};
use tokio_util::codec::Decoder;

/// The tail of stderr kept for the error message.
const STDERR_TAIL: usize = 4096;

#[derive(Debug, PartialEq)]
pub(super) enum Line {
    /// The whole line, without its `\n`.
    Whole(BytesMut),
    /// A line longer than the limit: its first bytes, and how many more were dropped.
    Cut { start: BytesMut, dropped: usize },
}

/// Splits bytes into lines; a line over `max` keeps its first `max` bytes, the rest dropped.
pub(super) struct LineCodec {
    max: usize,
    /// The start of a line being cut, and the bytes dropped of it so far.
    cutting: Option<(BytesMut, usize)>,
}

impl LineCodec {
    pub(super) fn new(max: usize) -> LineCodec {
        LineCodec { max, cutting: None }
    }
}

impl Decoder for LineCodec {
    type Item = Line;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Line>> {
        let newline = memchr::memchr(b'\n', buf);
        if let Some((_, dropped)) = &mut self.cutting {
            let Some(at) = newline else {
                *dropped += buf.len();
                buf.clear();
                return Ok(None);
            };
            *dropped += at;
            buf.advance(at + 1);
            let (start, dropped) = self.cutting.take().expect("cutting");
            return Ok(Some(Line::Cut { start, dropped }));
        }
        match newline {
            Some(at) if at <= self.max => {
                let line = buf.split_to(at);
                buf.advance(1);
                Ok(Some(Line::Whole(line)))
            }
            _ if buf.len() > self.max => {
                let start = buf.split_to(self.max);
                self.cutting = Some((start, 0));
                self.decode(buf)
            }
            _ => Ok(None),
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Line>> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        if let Some((start, dropped)) = self.cutting.take() {
            return Ok(Some(Line::Cut { start, dropped }));
        }
        Ok((!buf.is_empty()).then(|| Line::Whole(buf.split())))
    }
}

/// A line without a trailing `\r`, as text (invalid UTF-8 ends it: the valid part is kept).
pub(super) fn text(line: &[u8]) -> &str {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match std::str::from_utf8(line) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or_default(),
    }
}

/// Keeps the last few KiB of stderr, logging each chunk at debug.
pub(super) async fn stderr_tail(stderr: impl AsyncRead + Unpin) -> String {
    let mut reader = BufReader::new(stderr);
    let mut tail = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                tracing::debug!(stderr = %String::from_utf8_lossy(&chunk[..n]), "claude stderr");
                tail.extend_from_slice(&chunk[..n]);
                if tail.len() > STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
        }
    }
    String::from_utf8_lossy(&tail).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `chunks` to a codec cutting at `max`, then ends the stream.
    fn lines(max: usize, chunks: &[&str]) -> Vec<Line> {
        let mut codec = LineCodec::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk.as_bytes());
            while let Some(line) = codec.decode(&mut buf).unwrap() {
                out.push(line);
            }
            assert!(buf.len() <= max + chunk.len(), "held {} bytes", buf.len());
        }
        while let Some(line) = codec.decode_eof(&mut buf).unwrap() {
            out.push(line);
        }
        out
    }

    fn whole(s: &str) -> Line {
        Line::Whole(BytesMut::from(s))
    }

    fn cut(s: &str, dropped: usize) -> Line {
        Line::Cut {
            start: BytesMut::from(s),
            dropped,
        }
    }

    #[test]
    fn lines_longer_than_the_limit_are_cut_and_the_rest_dropped_as_it_comes() {
        assert_eq!(
            lines(4, &["ab\nabcd\nabc", "def", "ghij\nxy"]),
            [whole("ab"), whole("abcd"), cut("abcd", 6), whole("xy")]
        );
        assert_eq!(lines(4, &["abcdefgh"]), [cut("abcd", 4)]);
        assert_eq!(lines(4, &["abcde\n", "\n"]), [cut("abcd", 1), whole("")]);
    }
}
