//! The file tools through the registry and the scheduler: schema
//! validation, execution and the `functionResponse` parts the model gets.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use gd_core::chat::ToolCallRequest;
use gd_core::events::EventSink;
use gd_core::scheduler::{CompletedCall, Scheduler};
use gd_core::tools::{ToolContext, ToolRegistry};
use gd_protocol::{ConfirmationDetails, ToolCallStatus};
use serde_json::{Value, json};

fn workspace() -> (tempfile::TempDir, PathBuf, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ctx = ToolContext::new(vec![root.clone()]);
    (dir, root, ctx)
}

async fn call(ctx: &ToolContext, name: &str, args: Value) -> CompletedCall {
    let scheduler = Scheduler::new(
        Arc::new(ToolRegistry::with_all_builtins()),
        Arc::new(gd_core::approval::AllowAll),
        Arc::new(gd_core::approval::Confirmations::default()),
    );
    let (sink, _events) = EventSink::new();
    let request = ToolCallRequest {
        call_id: "c1".into(),
        name: name.into(),
        args,
    };
    scheduler
        .run(&[request], ctx, &sink)
        .await
        .completed
        .remove(0)
}

fn response(done: &CompletedCall) -> Value {
    serde_json::to_value(&done.parts[0]).unwrap()["functionResponse"]["response"].clone()
}

#[tokio::test]
async fn image_reaches_the_model_as_inline_data_beside_the_response() {
    let (_d, root, ctx) = workspace();
    let jpeg = [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, b'J', b'F', b'I', b'F'];
    fs::write(root.join("photo.JPG"), jpeg).unwrap();
    let done = call(&ctx, "read_file", json!({"file_path": "photo.JPG"})).await;
    assert_eq!(done.status, ToolCallStatus::Success);
    assert_eq!(done.parts.len(), 2);
    assert_eq!(
        response(&done),
        json!({"output": "Binary content of type image/jpeg was processed."})
    );
    let inline = serde_json::to_value(&done.parts[1]).unwrap();
    assert_eq!(
        inline,
        json!({"inlineData": {
            "mimeType": "image/jpeg",
            "data": base64::engine::general_purpose::STANDARD.encode(jpeg)
        }})
    );
}

#[tokio::test]
async fn schema_violations_and_tool_errors_go_back_as_errors() {
    let (_d, root, ctx) = workspace();
    fs::write(root.join("a.txt"), "a\n").unwrap();
    let done = call(
        &ctx,
        "read_file",
        json!({"file_path": "a.txt", "start_line": 0}),
    )
    .await;
    assert_eq!(
        response(&done),
        json!({"error": "Invalid parameters for read_file: params/start_line must be >= 1"})
    );
    let done = call(
        &ctx,
        "replace",
        json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
    )
    .await;
    assert_eq!(
        response(&done),
        json!({"error": "Invalid parameters for replace: params must have required property 'instruction'"})
    );
    let done = call(&ctx, "read_file", json!({"file_path": "../../etc/passwd"})).await;
    assert_eq!(done.status, ToolCallStatus::Error);
    let error = response(&done)["error"].as_str().unwrap().to_owned();
    assert!(error.contains("is outside the workspace"), "{error}");
}

#[tokio::test]
async fn write_replace_read_round_trip() {
    let (_d, root, ctx) = workspace();
    let path = root.join("src/lib.rs");
    let path_str = path.to_str().unwrap();
    let done = call(
        &ctx,
        "write_file",
        json!({"file_path": path_str, "content": "pub fn one() -> u32 {\n    1\n}\n"}),
    )
    .await;
    assert_eq!(
        response(&done),
        json!({"output": format!("Successfully created and wrote to new file: {path_str}.")})
    );
    assert_eq!(done.display.as_deref(), Some("Created src/lib.rs (+3)"));

    let done = call(
        &ctx,
        "replace",
        json!({
            "file_path": path_str,
            "instruction": "Return two.",
            "old_string": "    1\n",
            "new_string": "    2\n"
        }),
    )
    .await;
    assert_eq!(
        response(&done),
        json!({"output": format!("Successfully modified file: {path_str} (1 replacements).")})
    );
    assert_eq!(
        done.display.as_deref(),
        Some("Updated src/lib.rs (+1 \u{2212}1)")
    );

    let done = call(
        &ctx,
        "read_file",
        json!({"file_path": "src/lib.rs", "start_line": 2, "end_line": 2}),
    )
    .await;
    let output = response(&done)["output"].as_str().unwrap().to_owned();
    assert!(output.ends_with("start_line: 3.]\n\n    2"), "{output}");
    assert_eq!(
        done.display.as_deref(),
        Some("Read lines 2-2 of 3 from src/lib.rs")
    );

    let done = call(&ctx, "read_many_files", json!({"paths": ["src"]})).await;
    assert_eq!(
        response(&done),
        json!({"output": format!(
            "--- {path_str} ---\n\npub fn one() -> u32 {{\n    2\n}}\n\n\n\n--- End of content ---"
        )})
    );
}

#[tokio::test]
async fn edit_confirmations_are_prepared_without_touching_the_disk() {
    let (_d, root, ctx) = workspace();
    fs::write(root.join("c.txt"), "x\r\ny\r\n").unwrap();
    let registry = ToolRegistry::with_all_builtins();
    let replace = registry.get("replace").unwrap();
    let args = json!({"file_path": "c.txt", "instruction": "y to z", "old_string": "y", "new_string": "z"});
    let details = replace.prepare(&args, &ctx).await.unwrap().unwrap();
    let ConfirmationDetails::Edit {
        file_path,
        original,
        proposed,
        unified_diff,
        side_by_side,
        ..
    } = details
    else {
        panic!("expected an edit confirmation");
    };
    assert_eq!(file_path, root.join("c.txt").display().to_string());
    assert_eq!(original.as_deref(), Some("x\ny\n"));
    assert_eq!(proposed, "x\nz\n");
    assert_eq!(
        unified_diff,
        "--- a/c.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"
    );
    assert_eq!((side_by_side.added, side_by_side.removed), (1, 1));
    assert_eq!(fs::read(root.join("c.txt")).unwrap(), b"x\r\ny\r\n");

    // The user edits the proposal; the modified call writes exactly that.
    let modified = replace
        .modified_args(&args_abs(&root, &args), "x\nedited\n")
        .unwrap();
    let done = call(&ctx, "replace", modified).await;
    assert_eq!(done.status, ToolCallStatus::Success, "{:?}", done.error);
    assert_eq!(fs::read(root.join("c.txt")).unwrap(), b"x\r\nedited\r\n");
}

/// `args` with `file_path` made absolute, as models send it.
fn args_abs(root: &Path, args: &Value) -> Value {
    let mut args = args.clone();
    let rel = args["file_path"].as_str().unwrap().to_owned();
    args["file_path"] = json!(root.join(rel).to_str().unwrap());
    args
}

#[tokio::test]
async fn huge_and_binary_files_are_refused_quickly() {
    let (_d, root, ctx) = workspace();
    let huge = fs::File::create(root.join("huge.txt")).unwrap();
    huge.set_len(21 * 1024 * 1024).unwrap();
    let done = call(&ctx, "read_file", json!({"file_path": "huge.txt"})).await;
    assert!(
        response(&done)["error"]
            .as_str()
            .unwrap()
            .starts_with("File is too large to read:")
    );
    let done = call(
        &ctx,
        "replace",
        json!({"file_path": "huge.txt", "instruction": "", "old_string": "a", "new_string": "b"}),
    )
    .await;
    assert!(
        response(&done)["error"]
            .as_str()
            .unwrap()
            .starts_with("File is too large to edit:")
    );
    fs::write(root.join("prog"), b"\x7fELF\x02\x01\x01\0\0\0\0").unwrap();
    let done = call(&ctx, "read_file", json!({"file_path": "prog"})).await;
    assert_eq!(
        response(&done),
        json!({"error": format!("Cannot display content of binary file: {}", root.join("prog").display())})
    );
}
