//! A user message for `claude`: its text and the image files attached, each read and checked
//! (an absolute path to a regular file of at most `MAX_IMAGE_BYTES`, a PNG, JPEG, GIF or WebP
//! by its first bytes) and carried as base64 for the message's `image` blocks.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use base64::Engine;
use hld_client::protocol::MAX_IMAGE_BYTES;

/// The most images one message carries.
pub const MAX_IMAGES: usize = 20;

/// An image file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// The path as given (absolute).
    pub path: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: &'static str,
    /// The file's bytes, base64.
    pub data: String,
}

/// What a turn starts with: the text and the images attached (written images first, as
/// Claude Code sends pasted images).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub images: Vec<Image>,
}

impl Prompt {
    /// A prompt of text alone.
    pub fn text(text: impl Into<String>) -> Prompt {
        Prompt {
            text: text.into(),
            images: Vec::new(),
        }
    }

    /// The images' paths, as stored with the message.
    pub fn paths(&self) -> Vec<String> {
        self.images.iter().map(|i| i.path.clone()).collect()
    }

    /// What the conversation stores: see [`described`].
    pub fn described(&self) -> String {
        described(&self.text, &self.paths())
    }
}

/// The text of a user message as the conversation stores it: the text, then one line
/// `[image: NAME]` per image attached.
pub fn described(text: &str, paths: &[String]) -> String {
    let mut lines: Vec<String> = Vec::new();
    if !text.is_empty() || paths.is_empty() {
        lines.push(text.to_owned());
    }
    for path in paths {
        let name = Path::new(path)
            .file_name()
            .map_or_else(|| path.clone(), |n| n.to_string_lossy().into_owned());
        lines.push(format!("[image: {name}]"));
    }
    lines.join("\n")
}

/// Reads and checks the images at `paths` (blocking file reads); the first one refused, by
/// its index and why.
pub fn read_all(paths: &[String]) -> Result<Vec<Image>, (usize, String)> {
    if paths.len() > MAX_IMAGES {
        return Err((
            MAX_IMAGES,
            format!(
                "{} images attached: at most {MAX_IMAGES} per message",
                paths.len()
            ),
        ));
    }
    paths
        .iter()
        .enumerate()
        .map(|(i, path)| read(path).map_err(|why| (i, why)))
        .collect()
}

/// Reads and checks one image file; why it is refused otherwise.
pub fn read(path: &str) -> Result<Image, String> {
    if !Path::new(path).is_absolute() {
        return Err(format!("{path} is not an absolute path"));
    }
    // Without blocking: opening a FIFO for reading would wait for a writer.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot open {path}: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{path} is not a regular file"));
    }
    let too_large = || format!("{path} is larger than {MAX_IMAGE_BYTES} bytes");
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(too_large());
    }
    // Read with the cap again: the file may grow after the size was checked.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or_default());
    file.take(MAX_IMAGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(too_large());
    }
    let media_type = media_type(&bytes)
        .ok_or_else(|| format!("{path} is not a PNG, JPEG, GIF or WebP image"))?;
    Ok(Image {
        path: path.to_owned(),
        media_type,
        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
    })
}

/// The media type of an image by its magic bytes.
fn media_type(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("image/webp"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_known_by_their_first_bytes() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(media_type(png), Some("image/png"));
        assert_eq!(
            media_type(b"\xff\xd8\xff\xe0\0\x10JFIF"),
            Some("image/jpeg")
        );
        assert_eq!(media_type(b"GIF89a\x01\0"), Some("image/gif"));
        assert_eq!(media_type(b"GIF87a\x01\0"), Some("image/gif"));
        assert_eq!(media_type(b"RIFF\x24\0\0\0WEBPVP8 "), Some("image/webp"));
        for not in [
            &b"RIFF\x24\0\0\0WAVEfmt "[..],
            b"\x89PNG",
            b"GIF88a",
            b"hello",
            b"",
        ] {
            assert_eq!(media_type(not), None, "{not:?}");
        }
    }

    #[test]
    fn files_are_checked_before_they_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name).display().to_string();
        std::fs::write(at("a.png"), b"\x89PNG\r\n\x1a\nrest").unwrap();
        std::fs::write(at("notes.txt"), b"just text").unwrap();
        let image = read(&at("a.png")).unwrap();
        assert_eq!(image.media_type, "image/png");
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(&image.data)
                .unwrap(),
            b"\x89PNG\r\n\x1a\nrest"
        );
        let refused = |path: &str| read(path).unwrap_err();
        assert!(refused("a.png").contains("not an absolute path"));
        assert!(refused(&at("missing.png")).contains("cannot open"));
        assert!(refused(&dir.path().display().to_string()).contains("not a regular file"));
        nix::unistd::mkfifo(&dir.path().join("pipe.png"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(refused(&at("pipe.png")).contains("not a regular file"));
        assert!(refused(&at("notes.txt")).contains("not a PNG, JPEG, GIF or WebP"));
        let big = std::fs::File::create(at("big.png")).unwrap();
        big.set_len(MAX_IMAGE_BYTES + 1).unwrap();
        assert!(refused(&at("big.png")).contains("larger than"));
        let many = vec![at("a.png"); MAX_IMAGES + 1];
        assert!(read_all(&many).unwrap_err().1.contains("at most 20"));
        let (index, _) = read_all(&[at("a.png"), at("notes.txt")]).unwrap_err();
        assert_eq!(index, 1);
    }

    #[test]
    fn the_conversation_names_the_images_after_the_text() {
        let paths = ["/tmp/shot.png".to_owned(), "/x/y/diagram.webp".to_owned()];
        assert_eq!(
            described("look", &paths),
            "look\n[image: shot.png]\n[image: diagram.webp]"
        );
        assert_eq!(described("", &paths[..1]), "[image: shot.png]");
        assert_eq!(described("just text", &[]), "just text");
    }
}
