//! Helpers shared by the integration tests: a raw HTTP/1.1 client (to see
//! the exact bytes, including a missing final chunk), SSE parsing, a
//! reqwest client, and access to the peer-bench scenarios and Gemini CLI fixtures in tests/fixtures.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

pub fn scenario_path(name: &str) -> PathBuf {
    gd_fake_gemini::fixtures::scenarios_dir().join(format!("{name}.json"))
}

pub fn scenario(name: &str) -> Value {
    gd_fake_gemini::scenario_from_file(scenario_path(name)).expect("scenario loads")
}

/// A recorded gemini-cli request fixture (`{path, query, headers, body, fake_reply_parts}`).
pub fn fixture(name: &str) -> Value {
    let path = gd_fake_gemini::fixtures::gemini_cli_fixtures_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// A response exactly as it came off the socket.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body bytes as received (still chunk-encoded when chunked).
    pub raw_body: Vec<u8>,
}

/// A decoded `Transfer-Encoding: chunked` body.
#[derive(Debug)]
pub struct Chunked {
    pub chunks: Vec<Vec<u8>>,
    /// The zero-length terminating chunk arrived.
    pub terminated: bool,
    /// Bytes of an unfinished chunk (announced size not reached).
    pub incomplete: Vec<u8>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn is_chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    }

    pub fn chunked(&self) -> Chunked {
        assert!(
            self.is_chunked(),
            "response is not chunked: {:?}",
            self.headers
        );
        decode_chunked(&self.raw_body)
    }

    /// The body: de-chunked when chunked (all complete chunks plus any partial one).
    pub fn body(&self) -> Vec<u8> {
        if self.is_chunked() {
            let c = self.chunked();
            let mut out: Vec<u8> = c.chunks.concat();
            out.extend_from_slice(&c.incomplete);
            out
        } else {
            self.raw_body.clone()
        }
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body()).expect("utf-8 body")
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body())
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.text()))
    }

    /// The SSE events of a complete stream, parsed as JSON.
    pub fn sse(&self) -> Vec<Value> {
        let c = self.chunked();
        assert!(c.terminated, "stream was not terminated cleanly");
        sse_events(&String::from_utf8(c.chunks.concat()).unwrap())
    }
}

/// Parses `data:` events separated by blank lines (CRLF or LF).
pub fn sse_events(text: &str) -> Vec<Value> {
    let normalized = text.replace("\r\n", "\n");
    normalized
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            serde_json::from_str(&data.join("\n"))
                .unwrap_or_else(|e| panic!("bad SSE event ({e}): {block}"))
        })
        .collect()
}

pub fn decode_chunked(mut raw: &[u8]) -> Chunked {
    let mut out = Chunked {
        chunks: Vec::new(),
        terminated: false,
        incomplete: Vec::new(),
    };
    loop {
        let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size_line = std::str::from_utf8(&raw[..line_end]).expect("chunk size line");
        let size = usize::from_str_radix(size_line.trim(), 16).expect("hex chunk size");
        raw = &raw[line_end + 2..];
        if size == 0 {
            out.terminated = raw.starts_with(b"\r\n");
            return out;
        }
        if raw.len() < size + 2 {
            out.incomplete = raw[..raw.len().min(size)].to_vec();
            return out;
        }
        out.chunks.push(raw[..size].to_vec());
        raw = &raw[size + 2..];
    }
}

/// Sends one HTTP/1.1 request with `Connection: close` and reads until the
/// server closes the connection (or resets it: bytes read so far are kept).
pub fn raw_request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> RawResponse {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut req =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(req.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut buf = Vec::new();
    // A reset connection (cut_stream) ends the read with an error; keep what arrived.
    let _ = stream.read_to_end(&mut buf);
    parse_response(&buf)
}

pub fn raw_post(port: u16, path: &str, body: &Value) -> RawResponse {
    let bytes = serde_json::to_vec(body).unwrap();
    raw_request(
        port,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        &bytes,
    )
}

pub fn parse_response(buf: &[u8]) -> RawResponse {
    let head_end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(buf)));
    let head = std::str::from_utf8(&buf[..head_end]).unwrap();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    RawResponse {
        status,
        headers,
        raw_body: buf[head_end + 4..].to_vec(),
    }
}

/// The model parts of all events, concatenated in order.
pub fn all_parts(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .flat_map(|e| {
            e["candidates"][0]["content"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

/// A reqwest client (plain http; reqwest is built without a default TLS crypto provider).
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().expect("reqwest client")
}

pub const STREAM_PATH: &str = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
pub const GENERATE_PATH: &str = "/v1beta/models/gemini-2.5-flash:generateContent";

/// A minimal main-turn request body (declares one function tool).
pub fn main_body(prompt: &str) -> Value {
    serde_json::json!({
        "contents": [{"role": "user", "parts": [{"text": prompt}]}],
        "tools": [{"functionDeclarations": [{"name": "list_directory", "parametersJsonSchema": {"type": "object"}}]}],
    })
}
