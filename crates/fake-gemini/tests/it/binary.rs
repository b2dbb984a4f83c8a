//! The `fake-gemini` binary: command line, port file, log, clean SIGTERM.

use crate::common;

use common::*;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn binary_serves_a_scenario_and_exits_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port_file = dir.path().join("port");
    let log = dir.path().join("requests.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-gemini"))
        .args(["--port", "0", "--host", "127.0.0.1"])
        .arg("--port-file")
        .arg(&port_file)
        .arg("--scenario")
        .arg(scenario_path("b_list_dir"))
        .args(["--var", "WORKSPACE=/bin/ws"])
        .arg("--log")
        .arg(&log)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn fake-gemini");
    // The banner is printed once listening (and after the port file is written).
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut banner = String::new();
    stderr.read_line(&mut banner).unwrap();
    let port: u16 = banner
        .trim()
        .strip_prefix("fake-gemini listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected banner {banner:?}"))
        .parse()
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&port_file).unwrap(),
        port.to_string()
    );

    let resp = raw_post(port, STREAM_PATH, &main_body("list"));
    assert_eq!(
        all_parts(&resp.sse()),
        vec![json!({"functionCall": {"name": "list_directory", "args": {"dir_path": "/bin/ws"}}})]
    );
    let line = std::fs::read_to_string(&log).unwrap();
    let rec: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(
        (rec["kind"].as_str(), rec["step"].as_u64()),
        (Some("main"), Some(0))
    );

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "exit status {exit:?}");
}

#[test]
fn binary_rejects_a_bad_var() {
    let out = Command::new(env!("CARGO_BIN_EXE_fake-gemini"))
        .args(["--port", "0", "--var", "NOEQUALS"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("NAME=VALUE"));
}
