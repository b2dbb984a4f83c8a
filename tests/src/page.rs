//! Reading and driving the page of the app under test: test-id selectors, waiting for what the
//! page shows, clicking and typing, calling the IPC directly, screenshots. ([`App`]'s launch
//! and processes are in `app.rs`.)

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use fantoccini::Locator;
use fantoccini::elements::Element;
use fantoccini::key::Key;
use serde_json::{Value, json};

use crate::UI_TIMEOUT;
use crate::app::App;

/// CSS selector of the element carrying `data-testid="<id>"`. A test id inside another
/// element is written `<outer id>[<attr>=<value>] <id>` (e.g.
/// `setting[data-key=ui.theme] setting-input`, the theme row's field): each word is a test id,
/// optionally narrowed by attribute selectors.
pub fn testid(id: &str) -> String {
    id.split_whitespace()
        .map(|part| match part.split_once('[') {
            Some((name, attrs)) => format!("[data-testid=\"{name}\"][{}", quote_attrs(attrs)),
            None => format!("[data-testid=\"{part}\"]"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `data-key=ui.theme]` → `data-key="ui.theme"]` (attribute values quoted for CSS).
fn quote_attrs(attrs: &str) -> String {
    attrs
        .split("][")
        .map(|a| {
            let a = a.trim_end_matches(']');
            match a.split_once('=') {
                Some((k, v)) if !v.starts_with('"') => format!("{k}=\"{v}\""),
                _ => a.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("][")
        + "]"
}

/// Which of the elements with one test id a text wait looks at.
#[derive(Debug, Clone, Copy)]
enum Which {
    First,
    Last,
    Any,
}

impl App {
    // ----- Waiting for the page ---------------------------------------------------------------

    /// Polls `probe` until it returns `Some`, for up to [`UI_TIMEOUT`]. On timeout, fails with
    /// `what`, the last value `probe` saw (`last`) and a screenshot.
    async fn poll<T, F, Fut>(&self, what: &str, mut probe: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<(Option<T>, String)>>,
    {
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            let last = match probe().await {
                Ok((Some(value), _)) => return Ok(value),
                Ok((None, seen)) => seen,
                Err(error) => format!("error: {error:#}"),
            };
            if Instant::now() >= deadline {
                let shot = self.failure_screenshot().await;
                bail!("{what}: not within {UI_TIMEOUT:?}; last seen: {last}{shot}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// What each element with `data-testid=<id>` shows, in document order: the value of form
    /// fields (`textarea`, `input`, `select`), else the rendered text (`innerText`).
    pub async fn texts(&self, id: &str) -> Result<Vec<String>> {
        let value = self
            .client()
            .execute(
                "return Array.from(document.querySelectorAll(arguments[0])).map((e) =>                    ['TEXTAREA', 'INPUT', 'SELECT'].includes(e.tagName) ? e.value : e.innerText);",
                vec![json!(testid(id))],
            )
            .await
            .context("read element texts")?;
        Ok(serde_json::from_value(value)?)
    }

    /// An attribute of each element with `data-testid=<id>`, in document order.
    pub async fn attrs(&self, id: &str, attribute: &str) -> Result<Vec<Option<String>>> {
        let value = self
            .client()
            .execute(
                "return Array.from(document.querySelectorAll(arguments[0]))                   .map((e) => e.getAttribute(arguments[1]));",
                vec![json!(testid(id)), json!(attribute)],
            )
            .await
            .context("read element attributes")?;
        Ok(serde_json::from_value(value)?)
    }

    /// How many elements carry `data-testid=<id>`.
    pub async fn count(&self, id: &str) -> Result<usize> {
        let value = self
            .client()
            .execute(
                "return document.querySelectorAll(arguments[0]).length;",
                vec![json!(testid(id))],
            )
            .await
            .context("count elements")?;
        Ok(serde_json::from_value(value)?)
    }

    /// Waits until the (first) element with `data-testid=<id>` exists and its text satisfies
    /// `check`; returns that text.
    pub async fn wait_for_text(
        &self,
        id: &str,
        description: &str,
        check: impl Fn(&str) -> bool,
    ) -> Result<String> {
        self.wait_for_text_of(Which::First, id, description, check)
            .await
    }

    /// Waits until the **last** element with `data-testid=<id>` (the newest message, card or
    /// confirmation) exists and its text satisfies `check`; returns that text.
    pub async fn wait_for_last_text(
        &self,
        id: &str,
        description: &str,
        check: impl Fn(&str) -> bool,
    ) -> Result<String> {
        self.wait_for_text_of(Which::Last, id, description, check)
            .await
    }

    /// Waits until some element with `data-testid=<id>` shows a text satisfying `check`;
    /// returns that text.
    pub async fn wait_for_any_text(
        &self,
        id: &str,
        description: &str,
        check: impl Fn(&str) -> bool,
    ) -> Result<String> {
        self.wait_for_text_of(Which::Any, id, description, check)
            .await
    }

    /// The three text waits above: `which` element's text must satisfy `check`.
    async fn wait_for_text_of(
        &self,
        which: Which,
        id: &str,
        description: &str,
        check: impl Fn(&str) -> bool,
    ) -> Result<String> {
        let which_text = match which {
            Which::First => "",
            Which::Last => "last ",
            Which::Any => "some ",
        };
        self.poll(
            &format!("{which_text}[data-testid={id}] {description}"),
            || async {
                let texts = self.texts(id).await?;
                let found = match which {
                    Which::First => texts.first().filter(|text| check(text)),
                    Which::Last => texts.last().filter(|text| check(text)),
                    Which::Any => texts.iter().find(|text| check(text)),
                };
                Ok((found.cloned(), format!("{texts:?}")))
            },
        )
        .await
    }

    /// Waits until `attribute` of the last element with `data-testid=<id>` satisfies `check`;
    /// returns its value.
    pub async fn wait_for_attr(
        &self,
        id: &str,
        attribute: &str,
        description: &str,
        check: impl Fn(&str) -> bool,
    ) -> Result<String> {
        self.poll(
            &format!("last [data-testid={id}] {attribute} {description}"),
            || async {
                let values = self.attrs(id, attribute).await?;
                let found = values
                    .last()
                    .cloned()
                    .flatten()
                    .filter(|value| check(value));
                Ok((found, format!("{values:?}")))
            },
        )
        .await
    }

    /// Waits until the number of elements with `data-testid=<id>` satisfies `check`.
    pub async fn wait_for_count(
        &self,
        id: &str,
        description: &str,
        check: impl Fn(usize) -> bool,
    ) -> Result<usize> {
        self.poll(&format!("[data-testid={id}] {description}"), || async {
            let n = self.count(id).await?;
            Ok((check(n).then_some(n), format!("{n} element(s)")))
        })
        .await
    }

    /// Waits until no element with `data-testid=<id>` is displayed (absent or hidden).
    pub async fn wait_until_gone(&self, id: &str, description: &str) -> Result<()> {
        self.wait_for_script(
            &format!(
                "return Array.from(document.querySelectorAll({sel})).every((e) =>                    e.hidden || e.getClientRects().length === 0);",
                sel = json!(testid(id))
            ),
            &format!("[data-testid={id}] {description}"),
        )
        .await
    }

    /// Waits until `script` (a function body returning a value) returns `true`.
    pub async fn wait_for_script(&self, script: &str, description: &str) -> Result<()> {
        self.poll(description, || async {
            let value = self
                .client()
                .execute(script, vec![])
                .await
                .context("run script")?;
            Ok((
                (value == Value::Bool(true)).then_some(()),
                value.to_string(),
            ))
        })
        .await
    }

    /// Waits until the page has marked itself ready (`<body data-ready="true">`, set once
    /// `app_info` has answered).
    pub async fn wait_ready(&self) -> Result<()> {
        self.wait_for_script(
            "return document.body.dataset.ready === 'true';",
            "the page marks itself ready (body data-ready)",
        )
        .await
    }

    // ----- Acting on the page -----------------------------------------------------------------

    /// The last element with `data-testid=<id>` once it is displayed and enabled.
    pub async fn interactable(&self, id: &str) -> Result<Element> {
        self.poll(
            &format!("[data-testid={id}] is displayed and enabled"),
            || async {
                let mut elements = self
                    .client()
                    .find_all(Locator::Css(&testid(id)))
                    .await
                    .context("find elements")?;
                let Some(element) = elements.pop() else {
                    return Ok((None, "absent".into()));
                };
                let displayed = element.is_displayed().await?;
                let enabled = element.is_enabled().await?;
                let ready = displayed && enabled;
                Ok((
                    ready.then_some(element),
                    format!("displayed={displayed} enabled={enabled}"),
                ))
            },
        )
        .await
    }

    /// Clicks the last element with `data-testid=<id>` (the newest one: the confirmation of
    /// the pending call, the latest message...), waiting until it can be clicked and holds
    /// still. Transient failures (the element re-rendered, or was covered while the layout
    /// settled) are retried.
    pub async fn click(&self, id: &str) -> Result<()> {
        self.poll(&format!("click [data-testid={id}]"), || async {
            let element = self.interactable(id).await?;
            self.hold_still(&element).await?;
            match element.click().await {
                Ok(()) => Ok((Some(()), String::new())),
                Err(error) => Ok((None, format!("click failed: {error}"))),
            }
        })
        .await
    }

    /// Clicks `element` (found by other means than a test id) once it holds still.
    pub async fn click_element(&self, element: &Element) -> Result<()> {
        self.hold_still(element).await?;
        element.click().await.context("click the element")
    }

    /// Brings `element` into view and waits until its box is the same in two animation frames
    /// in a row. Why: WebDriver reads where to click and then clicks there, and in between the
    /// page may still move what just appeared — the chat scrolls to its end a frame after a
    /// card grew (a restore confirmation opened), so the click landed where the button had been
    /// (CI, 3c519f6: "Restore code and conversation" clicked, nothing restored).
    async fn hold_still(&self, element: &Element) -> Result<()> {
        let still = self
            .client()
            .execute_async(
                "const [el, done] = arguments;\
                 el.scrollIntoView({ block: 'nearest', inline: 'nearest' });\
                 let last = '';\
                 let frames = 0;\
                 const look = () => {\
                   const r = el.getBoundingClientRect();\
                   const now = [r.x, r.y, r.width, r.height].join(',');\
                   if (now === last) return done(true);\
                   if (++frames > 600) return done(false);\
                   last = now;\
                   requestAnimationFrame(look);\
                 };\
                 requestAnimationFrame(look);",
                vec![serde_json::to_value(element).context("pass the element")?],
            )
            .await
            .context("wait for the element to hold still")?;
        ensure!(
            still == json!(true),
            "the element kept moving for 600 frames"
        );
        Ok(())
    }

    /// Types `text` into the last element with `data-testid=<id>` (after what it holds).
    /// WebDriver key codes work too, e.g. `Key::Enter`.
    pub async fn type_into(&self, id: &str, text: &str) -> Result<()> {
        let element = self.interactable(id).await?;
        element
            .send_keys(text)
            .await
            .with_context(|| format!("type into [data-testid={id}]"))
    }

    /// Replaces the content of the text field with `data-testid=<id>` by `text`, typing it like
    /// a user: clear, then the lines of `text` with Enter between them. Fails unless the field
    /// then holds exactly `text`.
    pub async fn replace_text(&self, id: &str, text: &str) -> Result<()> {
        let element = self.interactable(id).await?;
        element
            .clear()
            .await
            .with_context(|| format!("clear [data-testid={id}]"))?;
        let enter = String::from(char::from(Key::Enter));
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                element.send_keys(&enter).await?;
            }
            if !line.is_empty() {
                element.send_keys(line).await?;
            }
        }
        let value = element.prop("value").await?.unwrap_or_default();
        if value != text {
            bail!("[data-testid={id}] holds {value:?} after typing {text:?}");
        }
        Ok(())
    }

    /// Types `text` into the text field with `data-testid=<id>` and presses Enter.
    pub async fn type_and_enter(&self, id: &str, text: &str) -> Result<()> {
        self.type_into(id, text).await?;
        self.type_into(id, &String::from(char::from(Key::Enter)))
            .await
    }

    /// Chooses the option with `value` in the `<select>` with `data-testid=<id>` as a user
    /// would (WebDriver's option click, which fires `input` and `change`), and checks it took.
    pub async fn select_option(&self, id: &str, value: &str) -> Result<()> {
        let element = self.interactable(id).await?;
        element
            .select_by_value(value)
            .await
            .with_context(|| format!("select {value:?} in [data-testid={id}]"))?;
        let selected = element.prop("value").await?.unwrap_or_default();
        if selected != value {
            bail!("[data-testid={id}] shows {selected:?} after selecting {value:?}");
        }
        Ok(())
    }

    /// Calls a Tauri command from the page, as the UI would, and returns its result: `Ok` with
    /// the resolved value or `Err` with the rejection as JSON: a string (e.g. a permission
    /// error) or a command's `CommandError` object (`{ kind, message }`).
    pub async fn invoke(&self, command: &str, args: Value) -> Result<Result<Value, Value>> {
        let outcome = self
            .client()
            .execute_async(
                "const done = arguments[arguments.length - 1];\
                 window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1])\
                   .then((value) => done({ ok: value === undefined ? null : value }),\
                         (error) => done({ err: error === undefined ? null :\
                           typeof error === 'object' ? error : String(error) }));",
                vec![json!(command), args],
            )
            .await
            .with_context(|| format!("invoke {command}"))?;
        match (outcome.get("ok"), outcome.get("err")) {
            (Some(ok), _) => Ok(Ok(ok.clone())),
            (_, Some(err)) => Ok(Err(err.clone())),
            _ => bail!("unexpected invoke outcome {outcome}"),
        }
    }

    /// Saves a PNG screenshot of the window as `<artifacts>/<name>.png` and returns its path.
    /// Waits for two animation frames first: WebKit's screenshot can otherwise be one frame
    /// behind the DOM.
    pub async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        self.client()
            .execute_async(
                "const done = arguments[arguments.length - 1];\
                 requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
                vec![],
            )
            .await
            .context("wait for two animation frames")?;
        let png = self
            .client()
            .screenshot()
            .await
            .context("take a screenshot")?;
        if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
            bail!("the screenshot is not a PNG ({} bytes)", png.len());
        }
        let path = self.artifacts_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).with_context(|| format!("write {}", path.display()))?;
        Ok(path)
    }

    /// Best effort screenshot for a failure message: `"; screenshot: <path>"` or nothing.
    async fn failure_screenshot(&self) -> String {
        match self.screenshot("failure").await {
            Ok(path) => format!("; screenshot: {}", path.display()),
            Err(_) => String::new(),
        }
    }
}
