//! gzip of REST replies (reference hld-rest.md section 1): a whole body is compressed when the
//! request's `Accept-Encoding` takes gzip, except on a path containing `/events`, whose event
//! stream must reach the reader as it is written.

use std::io::Write;

use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::Response;

use super::Reply;

/// `reply` to the request of `headers` on `path`, gzip-compressed if the client takes it. A
/// reply that may be compressed says so with `Vary: Accept-Encoding`; an empty body and a
/// streamed one stay as they are.
pub async fn encode(reply: Reply, headers: &HeaderMap, path: &str) -> Reply {
    if path.contains("/events") {
        return reply;
    }
    let (mut parts, body) = reply.into_parts();
    parts
        .headers
        .append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    let whole = matches!(body.size_hint().exact(), Some(n) if n > 0);
    if !whole || !takes_gzip(headers) {
        return Response::from_parts(parts, body);
    }
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    // Writing to memory cannot fail.
    let mut encoder = GzEncoder::new(Vec::with_capacity(bytes.len() / 4), Compression::fast());
    let gzipped = encoder
        .write_all(&bytes)
        .and_then(|()| encoder.finish())
        .expect("gzip into memory");
    parts
        .headers
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Full::new(Bytes::from(gzipped)).boxed())
}

/// Whether `Accept-Encoding` names gzip (or `x-gzip`) with a weight above zero.
fn takes_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut params = coding.split(';').map(str::trim);
            let name = params.next().unwrap_or_default();
            let weight = params
                .find_map(|p| p.strip_prefix("q="))
                .map_or(1.0, |q| q.parse::<f32>().unwrap_or(0.0));
            (name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip"))
                && weight > 0.0
        })
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn accepting(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn gzip_is_taken_when_named_with_a_weight() {
        for value in ["gzip", "deflate, gzip;q=0.5", "br, GZIP", "x-gzip"] {
            assert!(takes_gzip(&accepting(value)), "{value}");
        }
        for value in ["identity", "gzip;q=0", "br, deflate", "gzipped"] {
            assert!(!takes_gzip(&accepting(value)), "{value}");
        }
        assert!(!takes_gzip(&HeaderMap::new()));
    }

    #[tokio::test]
    async fn a_body_is_compressed_and_the_event_stream_never() {
        let body = || Response::new(Full::new(Bytes::from_static(b"{\"data\":[]}")).boxed());
        let gzipped = encode(body(), &accepting("gzip"), "/t/s/api/v1/sessions").await;
        assert_eq!(gzipped.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(gzipped.headers()[header::VARY], "Accept-Encoding");
        let bytes = gzipped.into_body().collect().await.unwrap().to_bytes();
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "{\"data\":[]}");
        let plain = encode(body(), &accepting("gzip"), "/t/s/api/v1/stream/events").await;
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
        let plain = encode(body(), &accepting("identity"), "/t/s/api/v1/sessions").await;
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
        assert_eq!(plain.headers()[header::VARY], "Accept-Encoding");
    }
}
