//! Where Markdown code is, so that `@path` inside fenced code blocks and
//! inline code spans is left alone (the seed's "code region detection").
//!
//! Fenced blocks follow CommonMark: a line starting (after at most three
//! spaces) with three or more backticks or tildes opens a block that the
//! next fence of the same character and at least the same length closes, or
//! the end of the text. Inline spans are a run of N backticks closed by the
//! next run of exactly N backticks; an unmatched run is literal text.

use std::ops::Range;

/// Byte ranges of code (fenced blocks and inline spans), in order.
pub fn code_regions(text: &str) -> Vec<Range<usize>> {
    let mut regions = Vec::new();
    let mut prose_start = 0;
    let mut offset = 0;
    let mut open_fence: Option<(u8, usize, usize)> = None; // (char, length, start)
    for line in text.split_inclusive('\n') {
        let line_end = offset + line.len();
        match open_fence {
            None => {
                if let Some((ch, len)) = fence(line) {
                    inline_spans(text, prose_start..offset, &mut regions);
                    open_fence = Some((ch, len, offset));
                }
            }
            Some((ch, len, start)) => {
                if let Some((close_ch, close_len)) = fence(line)
                    && close_ch == ch
                    && close_len >= len
                    && line.trim_start()[close_len..].trim().is_empty()
                {
                    regions.push(start..line_end);
                    open_fence = None;
                    prose_start = line_end;
                }
            }
        }
        offset = line_end;
    }
    match open_fence {
        Some((_, _, start)) => regions.push(start..text.len()),
        None => inline_spans(text, prose_start..text.len(), &mut regions),
    }
    regions
}

/// The fence character and length if `line` is a code fence.
fn fence(line: &str) -> Option<(u8, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line.as_bytes()[indent..];
    let ch = *rest.first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.iter().take_while(|&&b| b == ch).count();
    (len >= 3).then_some((ch, len))
}

/// Inline code spans inside `range` of `text`.
fn inline_spans(text: &str, range: Range<usize>, regions: &mut Vec<Range<usize>>) {
    let bytes = text.as_bytes();
    let mut i = range.start;
    while i < range.end {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = run_length(bytes, i, range.end);
        let mut j = i + run;
        let mut closed = None;
        while j < range.end {
            if bytes[j] == b'`' {
                let other = run_length(bytes, j, range.end);
                if other == run {
                    closed = Some(j + other);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => {
                regions.push(i..end);
                i = end;
            }
            None => i += run,
        }
    }
}

fn run_length(bytes: &[u8], start: usize, end: usize) -> usize {
    bytes[start..end].iter().take_while(|&&b| b == b'`').count()
}

/// Whether byte `pos` lies inside one of `regions`.
pub fn in_regions(regions: &[Range<usize>], pos: usize) -> bool {
    regions.iter().any(|r| r.contains(&pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> Vec<&str> {
        code_regions(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn fenced_blocks_and_inline_spans() {
        let text = "a `x` b\n```md\n@./in.md\n```\nc ``y ` z`` d\n";
        assert_eq!(code(text), ["`x`", "```md\n@./in.md\n```\n", "``y ` z``"]);
    }

    #[test]
    fn tilde_fences_longer_closers_and_unterminated_blocks() {
        assert_eq!(code("~~~\n```\n~~~~\nafter"), ["~~~\n```\n~~~~\n"]);
        assert_eq!(code("x\n````\nopen"), ["````\nopen"]);
        assert_eq!(code("an ` unmatched tick"), Vec::<&str>::new());
        assert_eq!(
            code("    ```\nindented four is no fence"),
            Vec::<&str>::new()
        );
    }
}
