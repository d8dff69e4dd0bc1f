//! The envelope of one incoming message: its `jsonrpc`, `method`, `params` and `id` members as
//! raw JSON text. A one-pass scanner reads the common shape; everything else, and every error,
//! is left to serde_json, so that both give the same envelope for whatever the scanner accepts
//! (a test mutates requests at random and compares the two).

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// The members of a request object that dispatch reads, as raw JSON.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// `jsonrpc`; `None` if absent or `null`.
    pub jsonrpc: Option<&'a str>,
    /// `method`; `None` if absent or `null`.
    pub method: Option<&'a str>,
    /// `params`; `None` if absent or `null`.
    pub params: Option<&'a str>,
    /// `id`; `None` when the key is absent (a notification), `Some("null")` for an explicit
    /// null.
    pub id: Option<&'a str>,
}

#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Reads the envelope of `text`, a whole message. Errors are serde_json's: a syntax error, or
/// a data error for valid JSON that is not an object (or repeats a member).
pub fn parse(text: &str) -> serde_json::Result<Envelope<'_>> {
    if let Some(envelope) = scan(text) {
        return Ok(envelope);
    }
    let incoming: Incoming = serde_json::from_str(text)?;
    Ok(Envelope {
        jsonrpc: incoming.jsonrpc.map(RawValue::get),
        method: incoming.method.map(RawValue::get),
        params: incoming.params.map(RawValue::get),
        id: incoming.id.map(RawValue::get),
    })
}

/// The scanner's shape: an object of the four members at most, each once, in any order, with
/// JSON whitespace anywhere between tokens; `jsonrpc` and `method` strings, `id` a string, a
/// number or `null`, `params` `null` or an empty object; strings without escapes. `None` for
/// anything else.
fn scan(text: &str) -> Option<Envelope<'_>> {
    let mut s = Scanner {
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut envelope = Envelope::default();
    s.skip_ws();
    s.expect(b'{')?;
    s.skip_ws();
    if !s.eat(b'}') {
        loop {
            let (start, end) = s.string()?;
            s.skip_ws();
            s.expect(b':')?;
            s.skip_ws();
            let start_value = s.at;
            let (slot, present) = match &s.bytes[start..end] {
                b"jsonrpc" => {
                    s.string()?;
                    (&mut envelope.jsonrpc, true)
                }
                b"method" => {
                    s.string()?;
                    (&mut envelope.method, true)
                }
                b"id" => {
                    s.id()?;
                    (&mut envelope.id, true)
                }
                b"params" => {
                    let present = !s.null();
                    if present {
                        s.empty_object()?;
                    }
                    (&mut envelope.params, present)
                }
                _ => return None,
            };
            // A repeated member: serde_json decides (it refuses it).
            if slot.is_some() {
                return None;
            }
            *slot = present.then(|| &text[start_value..s.at]);
            s.skip_ws();
            if s.eat(b'}') {
                break;
            }
            s.expect(b',')?;
            s.skip_ws();
        }
    }
    s.skip_ws();
    (s.at == s.bytes.len()).then_some(envelope)
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A string without escapes or control characters: the byte range of its contents.
    fn string(&mut self) -> Option<(usize, usize)> {
        self.expect(b'"')?;
        let start = self.at;
        let len = self.bytes[start..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        self.at += len;
        self.expect(b'"')?;
        Some((start, start + len))
    }

    fn null(&mut self) -> bool {
        let found = self.bytes[self.at..].starts_with(b"null");
        if found {
            self.at += 4;
        }
        found
    }

    fn empty_object(&mut self) -> Option<()> {
        self.expect(b'{')?;
        self.skip_ws();
        self.expect(b'}')
    }

    /// A string, a number or `null`.
    fn id(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'n' => self.null().then_some(()),
            _ => self.number(),
        }
    }

    /// A JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        if !self.eat(b'0') {
            if !matches!(self.peek()?, b'1'..=b'9') {
                return None;
            }
            self.digits();
        }
        if self.eat(b'.') {
            self.digit()?;
            self.digits();
        }
        if self.eat(b'e') || self.eat(b'E') {
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            self.digit()?;
            self.digits();
        }
        Some(())
    }

    fn digit(&mut self) -> Option<()> {
        self.peek().filter(u8::is_ascii_digit).map(|_| self.at += 1)
    }

    fn digits(&mut self) {
        while self.digit().is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_serde(text: &str) -> Option<Envelope<'_>> {
        let incoming: Incoming = serde_json::from_str(text).ok()?;
        Some(Envelope {
            jsonrpc: incoming.jsonrpc.map(RawValue::get),
            method: incoming.method.map(RawValue::get),
            params: incoming.params.map(RawValue::get),
            id: incoming.id.map(RawValue::get),
        })
    }

    const SEEDS: &[&str] = &[
        r#"{"jsonrpc":"2.0","method":"health","id":1}"#,
        r#"{"jsonrpc":"2.0","method":"listSessions","params":{},"id":"a-1"}"#,
        r#" { "id" : -12.5e+3 , "params" : null , "method" : "x" , "jsonrpc" : "2.0" } "#,
        r#"{"jsonrpc":"2.0","method":"health","id":null}"#,
        r#"{"jsonrpc":"2.0","method":"health"}"#,
        r#"{"jsonrpc":"2.0","method":"getConversation","params":{"session_id":"s"},"id":7}"#,
        "{\"jsonrpc\":\"2.0\",\r\n\t\"method\":\"health\",\"id\":0}",
        r#"{}"#,
        r#"{"id":1e400,"method":"é","jsonrpc":"2.0"}"#,
    ];

    #[test]
    fn the_scanner_reads_the_common_shapes_as_serde_does() {
        for seed in SEEDS {
            let by_serde = by_serde(seed).expect("a seed is valid");
            if !seed.contains("session_id") {
                assert_eq!(scan(seed).as_ref(), Some(&by_serde), "{seed}");
            }
            assert_eq!(parse(seed).ok(), Some(by_serde), "{seed}");
        }
    }

    #[test]
    fn the_scanner_leaves_other_shapes_and_every_error_to_serde() {
        for text in [
            r#"{"jsonrpc":"2.0","method":"he\u0061lth","id":1}"#,
            r#"{"jsonrpc":"2.0","method":"health","id":1,"extra":true}"#,
            r#"{"jsonrpc":"2.0","method":"health","id":1,"id":2}"#,
            r#"{"jsonrpc":"2.0","method":"health","id":01}"#,
            r#"{"jsonrpc":"2.0","method":"health","id":1,}"#,
            r#"{"jsonrpc":"2.0","method":"health","id":1} x"#,
            r#"{"jsonrpc":"2.0","method":"health","id":[1]}"#,
            r#"{"jsonrpc":"2.0","method":"health","id":1.}"#,
            r#"{"jsonrpc":2,"method":"health","id":1}"#,
            r#"{"jsonrpc":"2.0","method":"health","params":nul,"id":1}"#,
            "{\"jsonrpc\":\"2.0\",\"method\":\"a\u{1}b\",\"id\":1}",
            r#"["jsonrpc"]"#,
        ] {
            assert_eq!(scan(text), None, "{text}");
        }
        assert!(parse(r#"{"jsonrpc":"2.0","method":"health","id":1,}"#).is_err());
        let repeated = parse(r#"{"id":1,"id":2}"#).unwrap_err();
        assert!(repeated.is_data(), "{repeated}");
    }

    /// Random edits of the seeds: whatever the scanner accepts, serde reads the same way.
    #[test]
    fn the_scanner_never_disagrees_with_serde() {
        const ALPHABET: &[u8] = b" \t\n{}[]:,\"\\-+.0129eEnul";
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut accepted = 0;
        for _ in 0..200_000 {
            let seed = SEEDS[next() as usize % SEEDS.len()];
            let mut bytes = seed.as_bytes().to_vec();
            for _ in 0..1 + next() % 3 {
                let at = next() as usize % (bytes.len() + 1);
                let byte = ALPHABET[next() as usize % ALPHABET.len()];
                match next() % 3 {
                    0 => bytes.insert(at, byte),
                    1 if at < bytes.len() => bytes[at] = byte,
                    _ if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => {}
                }
            }
            let Ok(text) = std::str::from_utf8(&bytes) else {
                continue;
            };
            if let Some(scanned) = scan(text) {
                accepted += 1;
                assert_eq!(Some(scanned), by_serde(text), "{text}");
            }
        }
        // The edits leave many messages in the scanner's shape.
        assert!(accepted > 10_000, "only {accepted} accepted");
    }
}
