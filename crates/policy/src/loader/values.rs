//! Reading one field's value, with a located error when it has the wrong
//! type or shape.

use crate::LazyRegex;
use toml::de::DeValue;

use crate::rule::Mode;

use super::{FileCtx, Value};

pub(super) fn string(
    ctx: &mut FileCtx<'_>,
    field: &str,
    v: &Value<'_>,
    bom: usize,
) -> Option<String> {
    match v.get_ref() {
        DeValue::String(s) => Some(s.to_string()),
        other => {
            ctx.error(
                v.span().start + bom..v.span().end + bom,
                format!("`{field}` must be a string, found {}", other.type_str()),
            );
            None
        }
    }
}

pub(super) fn string_or_list(
    ctx: &mut FileCtx<'_>,
    field: &str,
    v: &Value<'_>,
    bom: usize,
) -> Option<Vec<String>> {
    let span = v.span().start + bom..v.span().end + bom;
    match v.get_ref() {
        DeValue::String(s) if s.is_empty() => {
            ctx.error(span, format!("`{field}` must not be empty"));
            None
        }
        DeValue::String(s) => Some(vec![s.to_string()]),
        DeValue::Array(items) => {
            if items.is_empty() {
                ctx.error(span, format!("`{field}` must not be an empty list"));
                return None;
            }
            let mut out = Vec::new();
            for item in items.iter() {
                match item.get_ref() {
                    DeValue::String(s) if !s.is_empty() => out.push(s.to_string()),
                    DeValue::String(_) => {
                        ctx.error(
                            item.span().start + bom..item.span().end + bom,
                            format!("`{field}` entries must not be empty"),
                        );
                        return None;
                    }
                    other => {
                        ctx.error(
                            item.span().start + bom..item.span().end + bom,
                            format!(
                                "`{field}` entries must be strings, found {}",
                                other.type_str()
                            ),
                        );
                        return None;
                    }
                }
            }
            Some(out)
        }
        other => {
            ctx.error(
                span,
                format!(
                    "`{field}` must be a string or a list of strings, found {}",
                    other.type_str()
                ),
            );
            None
        }
    }
}

pub(super) fn regex(
    ctx: &mut FileCtx<'_>,
    field: &str,
    v: &Value<'_>,
    bom: usize,
) -> Option<LazyRegex> {
    let pattern = string(ctx, field, v, bom)?;
    match LazyRegex::new(&pattern) {
        Ok(re) => Some(re),
        Err(reason) => {
            // The parser's message spans several lines (pattern, caret,
            // reason); keep its last line, the reason.
            let reason = reason
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim();
            let reason = reason.strip_prefix("error: ").unwrap_or(reason);
            ctx.error(
                v.span().start + bom..v.span().end + bom,
                format!("`{field}` is not a valid regular expression: {reason}"),
            );
            None
        }
    }
}

pub(super) fn priority(ctx: &mut FileCtx<'_>, v: &Value<'_>, bom: usize) -> Option<u16> {
    let span = v.span().start + bom..v.span().end + bom;
    let DeValue::Integer(i) = v.get_ref() else {
        ctx.error(
            span,
            format!(
                "`priority` must be an integer from 0 to 999, found {}",
                v.get_ref().type_str()
            ),
        );
        return None;
    };
    match i64::from_str_radix(i.as_str(), i.radix()) {
        Ok(n @ 0..=999) => Some(n as u16),
        _ => {
            ctx.error(
                span,
                format!(
                    "`priority` must be from 0 to 999, found {} (a priority of 1000 or more would jump to the next tier)",
                    i.as_str()
                ),
            );
            None
        }
    }
}

pub(super) fn modes(ctx: &mut FileCtx<'_>, v: &Value<'_>, bom: usize) -> Vec<Mode> {
    let DeValue::Array(items) = v.get_ref() else {
        ctx.error(
            v.span().start + bom..v.span().end + bom,
            format!(
                "`modes` must be a list of modes, found {}",
                v.get_ref().type_str()
            ),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items.iter() {
        let span = item.span().start + bom..item.span().end + bom;
        match item.get_ref() {
            DeValue::String(s) => match s.parse::<Mode>() {
                Ok(m) => out.push(m),
                Err(message) => ctx.error(span, message),
            },
            other => ctx.error(
                span,
                format!(
                    "`modes` entries must be strings, found {}",
                    other.type_str()
                ),
            ),
        }
    }
    out
}
