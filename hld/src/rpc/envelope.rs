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
/// number or `null`, `params` `null` or an empty object; strings of ASCII without escapes or
/// control characters. `None` for anything else.
fn scan(text: &str) -> Option<Envelope<'_>> {
    let mut s = Scanner {
        rest: text.as_bytes(),
    };
    let mut envelope = Envelope::default();
    // The members read so far, a bit each (`params: null` leaves its slot empty).
    let mut seen = 0u8;
    s.skip_ws();
    s.expect(b'{')?;
    s.skip_ws();
    if !s.eat(b'}') {
        loop {
            // A member's name, with its quotes (a name with escapes is none of these).
            let member = if s.eat_all(b"\"jsonrpc\"") {
                Member::Jsonrpc
            } else if s.eat_all(b"\"method\"") {
                Member::Method
            } else if s.eat_all(b"\"id\"") {
                Member::Id
            } else if s.eat_all(b"\"params\"") {
                Member::Params
            } else {
                return None;
            };
            // A repeated member: serde_json decides (it refuses it).
            let bit = 1 << member as u8;
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            s.skip_ws();
            s.expect(b':')?;
            s.skip_ws();
            let value = s.rest;
            // `params: null` counts as absent.
            let present = match (member, value.first()?) {
                (Member::Params, b'n') => s.null().map(|()| false),
                (Member::Params, _) => s.empty_object().map(|()| true),
                (_, b'"') => s.string().map(|()| true),
                (Member::Id, b'n') => s.null().map(|()| true),
                (Member::Id, _) => s.number().map(|()| true),
                _ => None,
            }?;
            let slot = match member {
                Member::Jsonrpc => &mut envelope.jsonrpc,
                Member::Method => &mut envelope.method,
                Member::Id => &mut envelope.id,
                Member::Params => &mut envelope.params,
            };
            *slot = present.then(|| &text[text.len() - value.len()..text.len() - s.rest.len()]);
            s.skip_ws();
            if s.eat(b'}') {
                break;
            }
            s.expect(b',')?;
            s.skip_ws();
        }
    }
    s.skip_ws();
    s.rest.is_empty().then_some(envelope)
}

/// The bytes that end the scanner's run through a string: its closing quote, and a
/// backslash, a control character or a byte of a non-ASCII character, which leave the
/// message to serde_json.
static ENDS_STRING: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] =
            byte < 0x20 || byte >= 0x80 || byte == b'"' as usize || byte == b'\\' as usize;
        byte += 1;
    }
    table
};

/// The members the scanner reads.
#[derive(Clone, Copy)]
enum Member {
    Jsonrpc,
    Method,
    Id,
    Params,
}

/// The text not yet scanned: each step takes its token off the front.
struct Scanner<'a> {
    rest: &'a [u8],
}

impl Scanner<'_> {
    fn eat(&mut self, byte: u8) -> bool {
        match self.rest {
            [first, tail @ ..] if *first == byte => {
                self.rest = tail;
                true
            }
            _ => false,
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    /// Consumes `literal` if the text continues with it.
    fn eat_all(&mut self, literal: &[u8]) -> bool {
        match self.rest.strip_prefix(literal) {
            Some(tail) => {
                self.rest = tail;
                true
            }
            None => false,
        }
    }

    fn skip_ws(&mut self) {
        while let [first, tail @ ..] = self.rest {
            // JSON's whitespace is all below '!', and most tokens have none before them.
            if *first > b' ' || !matches!(first, b' ' | b'\t' | b'\n' | b'\r') {
                return;
            }
            self.rest = tail;
        }
    }

    /// A string of ASCII without escapes or control characters.
    fn string(&mut self) -> Option<()> {
        let [b'"', body @ ..] = self.rest else {
            return None;
        };
        let len = body.iter().position(|&b| ENDS_STRING[usize::from(b)])?;
        let [b'"', tail @ ..] = &body[len..] else {
            return None;
        };
        self.rest = tail;
        Some(())
    }

    fn null(&mut self) -> Option<()> {
        self.eat_all(b"null").then_some(())
    }

    fn empty_object(&mut self) -> Option<()> {
        self.expect(b'{')?;
        self.skip_ws();
        self.expect(b'}')
    }

    /// A JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        if !self.eat(b'0') {
            if !matches!(self.rest.first()?, b'1'..=b'9') {
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
        let [b'0'..=b'9', tail @ ..] = self.rest else {
            return None;
        };
        self.rest = tail;
        Some(())
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
            // Non-empty params and non-ASCII text are serde_json's to read.
            if !seed.contains("session_id") && seed.is_ascii() {
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
            r#"{"jsonrpc":"2.0","method":"é","id":1}"#,
            r#"{"jsonrpc":"2.0","method":"health","params":null,"params":null,"id":1}"#,
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
