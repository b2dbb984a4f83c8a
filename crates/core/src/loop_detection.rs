//! Stops an agent that repeats itself, before it burns the user's quota.
//!
//! Two signals: the same tool call (name and arguments) several times in a
//! row, and the same passage of text recurring many times at short distance
//! in the streamed answer. Text inside fenced code blocks is not tracked,
//! because code legitimately repeats.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use gd_protocol::LoopKind;
use serde_json::Value;

/// Identical consecutive tool calls that count as a loop.
pub const TOOL_CALL_LOOP_THRESHOLD: u32 = 5;
/// Occurrences of the same text window that count as a loop.
pub const CONTENT_LOOP_THRESHOLD: usize = 10;
/// Size of the text window compared, in bytes.
pub const CONTENT_CHUNK_SIZE: usize = 50;
/// Average distance between occurrences allowed for a loop.
const MAX_LOOP_DISTANCE: usize = CONTENT_CHUNK_SIZE * 5;
/// Tracked text is trimmed to this many bytes.
const MAX_TRACKED: usize = 5_000;

/// A detected loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopDetected {
    pub kind: LoopKind,
    pub detail: String,
}

#[derive(Debug, Default)]
pub struct LoopDetector {
    last_call: Option<String>,
    call_repeats: u32,
    text: String,
    analysed_to: usize,
    windows: HashMap<u64, Vec<usize>>,
    in_code_block: bool,
}

impl LoopDetector {
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets everything; called at the start of each user turn.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Records a tool call; reports a loop at the fifth identical call in a row.
    pub fn check_tool_call(&mut self, name: &str, args: &Value) -> Option<LoopDetected> {
        self.reset_content();
        let key = format!("{name}:{}", canonical_json(args));
        if self.last_call.as_deref() == Some(key.as_str()) {
            self.call_repeats += 1;
        } else {
            self.last_call = Some(key);
            self.call_repeats = 1;
        }
        (self.call_repeats >= TOOL_CALL_LOOP_THRESHOLD).then(|| LoopDetected {
            kind: LoopKind::RepeatedToolCall,
            detail: format!(
                "The tool call {name} was repeated {} times with the same arguments.",
                self.call_repeats
            ),
        })
    }

    /// Records streamed answer text; reports a loop when a passage recurs.
    pub fn check_content(&mut self, delta: &str) -> Option<LoopDetected> {
        let fences = delta.matches("```").count();
        if fences > 0 {
            self.reset_content();
            if fences % 2 == 1 {
                self.in_code_block = !self.in_code_block;
            }
            return None;
        }
        if self.in_code_block {
            return None;
        }
        self.text.push_str(delta);
        self.trim();
        while self.analysed_to + CONTENT_CHUNK_SIZE <= self.text.len() {
            let start = self.analysed_to;
            self.analysed_to += 1;
            let end = start + CONTENT_CHUNK_SIZE;
            if !self.text.is_char_boundary(start) || !self.text.is_char_boundary(end) {
                continue;
            }
            let window = &self.text[start..end];
            let mut hasher = DefaultHasher::new();
            window.hash(&mut hasher);
            let positions = self.windows.entry(hasher.finish()).or_default();
            positions.push(start);
            if positions.len() >= CONTENT_LOOP_THRESHOLD {
                let recent = &positions[positions.len() - CONTENT_LOOP_THRESHOLD..];
                let average = (recent[recent.len() - 1] - recent[0]) / (CONTENT_LOOP_THRESHOLD - 1);
                if average <= MAX_LOOP_DISTANCE {
                    return Some(LoopDetected {
                        kind: LoopKind::RepeatedContent,
                        detail: format!(
                            "The same text was repeated {CONTENT_LOOP_THRESHOLD} times: \"{}\"",
                            window.trim()
                        ),
                    });
                }
            }
        }
        None
    }

    fn reset_content(&mut self) {
        self.text.clear();
        self.analysed_to = 0;
        self.windows.clear();
    }

    /// Keeps the tracked text bounded, shifting recorded positions.
    ///
    /// Trimming walks every recorded window, so it waits until the text is twice the bound and
    /// then halves it: a fast stream of tiny chunks would otherwise pay that walk per chunk
    /// (thousands of windows, thousands of chunks a second).
    fn trim(&mut self) {
        if self.text.len() <= 2 * MAX_TRACKED {
            return;
        }
        let mut cut = self.text.len() - MAX_TRACKED;
        while !self.text.is_char_boundary(cut) {
            cut += 1;
        }
        self.text.drain(..cut);
        self.analysed_to = self.analysed_to.saturating_sub(cut);
        self.windows.retain(|_, positions| {
            positions.retain(|p| *p >= cut);
            positions.iter_mut().for_each(|p| *p -= cut);
            !positions.is_empty()
        });
    }
}

/// JSON with object keys sorted, so `{"a":1,"b":2}` equals `{"b":2,"a":1}`.
fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(canonical_json)
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fifth_identical_tool_call_is_a_loop() {
        let mut d = LoopDetector::new();
        for _ in 0..4 {
            assert!(d.check_tool_call("ls", &json!({"a": 1, "b": 2})).is_none());
        }
        let hit = d.check_tool_call("ls", &json!({"b": 2, "a": 1})).unwrap();
        assert_eq!(hit.kind, LoopKind::RepeatedToolCall);
        let mut d = LoopDetector::new();
        for i in 0..10 {
            assert!(d.check_tool_call("ls", &json!({"i": i % 2})).is_none());
        }
    }

    #[test]
    fn repeated_text_is_a_loop_but_varied_text_and_code_are_not() {
        let mut d = LoopDetector::new();
        let sentence = "I will now check the configuration file again. ";
        let hit = (0..40).find_map(|_| d.check_content(sentence));
        assert_eq!(hit.unwrap().kind, LoopKind::RepeatedContent);

        let mut d = LoopDetector::new();
        for i in 0..400 {
            assert!(
                d.check_content(&format!(
                    "Step {i} covers a different topic entirely, number {}. ",
                    i * 7
                ))
                .is_none()
            );
        }

        let mut d = LoopDetector::new();
        assert!(d.check_content("```rust\n").is_none());
        for _ in 0..60 {
            assert!(
                d.check_content("    assert_eq!(parse(\"x\"), Ok(()));\n")
                    .is_none()
            );
        }
    }

    #[test]
    fn long_streams_stay_bounded_and_loops_late_in_them_are_found() {
        let mut d = LoopDetector::new();
        // 100 KB of varied text in 5-byte chunks, as a fast model streams it.
        let varied: String = (0..4000).map(|i| format!("w{i:05} ")).collect();
        for chunk in varied.as_bytes().chunks(5) {
            assert!(
                d.check_content(std::str::from_utf8(chunk).unwrap())
                    .is_none()
            );
            assert!(d.text.len() <= 2 * MAX_TRACKED + 5);
        }
        let windows: usize = d.windows.values().map(Vec::len).sum();
        assert!(windows <= 2 * MAX_TRACKED, "{windows} windows tracked");
        let sentence = "I will now check the configuration file again. ";
        let hit = (0..40).find_map(|_| d.check_content(sentence));
        assert_eq!(hit.unwrap().kind, LoopKind::RepeatedContent);
    }
}
