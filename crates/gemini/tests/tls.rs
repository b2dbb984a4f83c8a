//! HTTPS through `http_client_builder`: the shared TLS configuration verifies
//! servers against the system's roots, for every client of the process.
//!
//! The "system" here is `SSL_CERT_FILE`, which the platform verifier reads on
//! Linux: a private CA made with the `openssl` binary, whose leaf certificate
//! `openssl s_server` serves on loopback. This file holds one test because
//! the roots are read once per process, when the first certificate is
//! checked (gd_http's `LazyVerifier`): a binary of its own, out of `tests/it`.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the openssl binary (Debian package openssl)");
    assert!(status.success(), "openssl {args:?}");
}

/// A CA (`<name>-ca.pem`) and a leaf for localhost / 127.0.0.1 signed by it
/// (`<name>-leaf.pem`, `<name>-leaf.key`).
fn make_ca_and_leaf(dir: &Path, name: &str) {
    let ca_key = format!("{name}-ca.key");
    let ca = format!("{name}-ca.pem");
    let key = format!("{name}-leaf.key");
    let csr = format!("{name}-leaf.csr");
    let leaf = format!("{name}-leaf.pem");
    let ext = format!("{name}-leaf.ext");
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &ca_key,
            "-out",
            &ca,
            "-days",
            "2",
            "-subj",
            &format!("/CN={name} test CA"),
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &csr,
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(
        dir.join(&ext),
        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n\
         extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-out",
            &leaf,
            "-days",
            "2",
            "-extfile",
            &ext,
        ],
    );
}

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `openssl s_server -www` with `<name>`'s leaf, once it accepts connections.
fn serve(dir: &Path, name: &str) -> Server {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new("openssl")
        .args([
            "s_server",
            "-accept",
            &port.to_string(),
            "-cert",
            &format!("{name}-leaf.pem"),
            "-key",
            &format!("{name}-leaf.key"),
            "-www",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("openssl s_server");
    // s_server prints ACCEPT once it listens.
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "s_server exited");
        if line.starts_with("ACCEPT") {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    Server { child, port }
}

#[tokio::test]
async fn clients_verify_servers_against_the_system_roots() {
    let dir = tempfile::tempdir().unwrap();
    make_ca_and_leaf(dir.path(), "trusted");
    make_ca_and_leaf(dir.path(), "stranger");
    // SAFETY: set before any client exists and before other threads read the
    // environment (this file's only test; the runtime's threads do not).
    unsafe { std::env::set_var("SSL_CERT_FILE", dir.path().join("trusted-ca.pem")) };
    unsafe { std::env::remove_var("SSL_CERT_DIR") };

    let trusted = serve(dir.path(), "trusted");
    let stranger = serve(dir.path(), "stranger");

    // Two clients, one configuration: both reach the server the roots trust.
    for attempt in 0..2 {
        let client = gd_gemini::http_client_builder().build().unwrap();
        let response = client
            .get(format!("https://localhost:{}/", trusted.port))
            .send()
            .await
            .unwrap_or_else(|e| panic!("client {attempt}: {e:?}"));
        assert!(
            response.status().is_success(),
            "client {attempt}: {}",
            response.status()
        );
        let page = response.text().await.unwrap();
        assert!(page.contains("s_server"), "client {attempt}: {page}");
    }

    // A server whose CA the roots do not hold is refused.
    let client = gd_gemini::http_client_builder().build().unwrap();
    let error = client
        .get(format!("https://localhost:{}/", stranger.port))
        .send()
        .await
        .expect_err("a certificate from an unknown CA must be refused");
    let chain = format!("{error:?}");
    assert!(
        chain.contains("UnknownIssuer") || chain.contains("certificate"),
        "{chain}"
    );
}
