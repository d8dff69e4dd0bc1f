//! Content-Length frames as an editor sends and reads them (spec/004), read strictly: what
//! the e2e tests and the bench read from `hld --stdio`, where any stray byte is a failure.

use std::io::Read;

use serde_json::Value;

/// `message` framed: `Content-Length: N\r\n\r\n` and its N bytes.
pub fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Reads one frame: exactly `Content-Length: N\r\n\r\n` and N bytes of JSON; `None` at the
/// end. Anything else is an error showing the bytes. Reads the header a byte at a time, so
/// give it a buffered reader where speed matters.
pub fn read_frame(from: &mut impl Read) -> Result<Option<Value>, String> {
    let mut header = Vec::new();
    let mut byte = [0u8];
    while !header.ends_with(b"\r\n\r\n") {
        match from.read(&mut byte) {
            Ok(0) if header.is_empty() => return Ok(None),
            Ok(0) => return Err(format!("ended inside a header: {header:?}")),
            Ok(_) => header.push(byte[0]),
            Err(e) => return Err(e.to_string()),
        }
        if header.len() > 100 {
            return Err(format!(
                "not a header: {:?}",
                String::from_utf8_lossy(&header)
            ));
        }
    }
    let text = String::from_utf8_lossy(&header);
    let length: usize = text
        .strip_prefix("Content-Length: ")
        .and_then(|rest| rest.strip_suffix("\r\n\r\n"))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("not a Content-Length header: {text:?}"))?;
    let mut body = vec![0; length];
    from.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body).map(Some).map_err(|e| {
        format!(
            "a body that is not JSON ({e}): {:?}",
            String::from_utf8_lossy(&body)
        )
    })
}
