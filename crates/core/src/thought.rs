//! Thought summaries arrive as text like `**Planning the edit**\n\nI will...`;
//! the bold span is the subject shown in the UI, the rest its description.

/// Splits a thought into (subject, description).
pub fn parse_thought(raw: &str) -> (String, String) {
    if let Some(start) = raw.find("**")
        && let Some(len) = raw[start + 2..].find("**")
    {
        let end = start + 2 + len;
        let subject = raw[start + 2..end].trim().to_owned();
        let description = format!("{}{}", &raw[..start], &raw[end + 2..])
            .trim()
            .to_owned();
        return (subject, description);
    }
    (String::new(), raw.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subject_and_description() {
        assert_eq!(
            parse_thought("**Reading files**\n\nI'll look at main.rs first."),
            ("Reading files".into(), "I'll look at main.rs first.".into())
        );
        assert_eq!(
            parse_thought("no subject here"),
            (String::new(), "no subject here".into())
        );
        assert_eq!(
            parse_thought("**unclosed"),
            (String::new(), "**unclosed".into())
        );
    }
}
