//! Runs `grep_search` or `glob` once, through the same `Tool::execute` path
//! the agent uses (argument parsing, walking, searching, sorting and output
//! formatting), and prints how many matches it reported. `bench/search.sh`
//! times it against ripgrep and fd.
//!
//!     cargo run --release -p gd-core --example search_bench -- grep <dir> <regex>
//!     cargo run --release -p gd-core --example search_bench -- glob <dir> <glob>

use gd_core::tools::glob::GlobTool;
use gd_core::tools::grep::GrepTool;
use gd_core::tools::{LlmContent, Tool, ToolContext};
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, dir, pattern] = args.as_slice() else {
        eprintln!("usage: search_bench grep|glob <dir> <pattern>");
        std::process::exit(2);
    };
    let dir = std::path::Path::new(dir)
        .canonicalize()
        .expect("the directory exists");
    let ctx = ToolContext::new(vec![dir.clone()]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let result = runtime.block_on(async {
        match mode.as_str() {
            // Limits high enough that every match is formatted, as rg does.
            "grep" => {
                let args = json!({"pattern": pattern, "total_max_matches": 100_000_000});
                GrepTool::new().execute(args, &ctx).await
            }
            "glob" => {
                let args = json!({"pattern": pattern});
                GlobTool::new().execute(args, &ctx).await
            }
            _ => {
                eprintln!("mode must be grep or glob");
                std::process::exit(2);
            }
        }
    });
    if let Some(error) = &result.error {
        eprintln!("{}", error.message);
        std::process::exit(1);
    }
    let LlmContent::Text(text) = &result.llm_content else {
        unreachable!("search tools answer with text")
    };
    // "Found N ..." / "No ... found": the number after "Found".
    let count = text
        .strip_prefix("Found ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or("0");
    println!("{count} ({} bytes of output)", text.len());
}
