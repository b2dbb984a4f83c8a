//! URL routing for the three API styles the client can speak (API key,
//! Vertex, Code Assist) plus the admin endpoints.
//!
//! Routing is done by hand rather than with axum's router because model
//! paths carry the method after a colon inside one segment
//! (`models/gemini-2.5-flash:streamGenerateContent`).

use axum::http::Method;

/// Which API surface a request used (the record's `api_style`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiStyle {
    /// `/{v1beta|v1|v1alpha}/models/{model}:{method}` with an API key.
    Gemini,
    /// `/{ver}/projects/{p}/locations/{l}/publishers/google/models/{model}:{method}`.
    Vertex,
    /// `/v1internal:{method}` with a wrapped body.
    CodeAssist,
}

impl ApiStyle {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiStyle::Gemini => "gemini",
            ApiStyle::Vertex => "vertex",
            ApiStyle::CodeAssist => "code_assist",
        }
    }

    /// Best guess for a path no route matched, so `unhandled` records still say which API was tried.
    fn guess(path: &str) -> ApiStyle {
        if path.starts_with("/v1internal") {
            ApiStyle::CodeAssist
        } else if path.contains("/projects/") || path.contains("/publishers/") {
            ApiStyle::Vertex
        } else {
            ApiStyle::Gemini
        }
    }
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/__admin/...`: control endpoints, not recorded.
    Admin(AdminRoute),
    /// Everything else: recorded and answered from the scenario.
    Api(ApiRoute),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminRoute {
    Health,
    Reset,
    Requests,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiRoute {
    ListModels,
    /// A model method on the Gemini or Vertex surface.
    Model {
        style: ApiStyle,
        model: String,
        method: String,
    },
    /// A Code Assist method; the model is in the body.
    CodeAssist {
        method: String,
    },
    /// `GET /v1internal/operations/{name}`: a Code Assist onboarding operation.
    CodeAssistOperation {
        name: String,
    },
    Unknown {
        style: ApiStyle,
    },
}

const VERSIONS: &[&str] = &["v1beta", "v1", "v1alpha", "v1beta1"];

/// Splits `model:method` as the reference regex does (`[^:/]+:[A-Za-z]+`).
fn model_and_method(segment: &str) -> Option<(String, String)> {
    let (model, method) = segment.split_once(':')?;
    let ok =
        !model.is_empty() && !method.is_empty() && method.bytes().all(|b| b.is_ascii_alphabetic());
    ok.then(|| (model.to_string(), method.to_string()))
}

pub fn route(method: &Method, path: &str) -> Route {
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let is_post = method == Method::POST;
    let is_get = method == Method::GET;
    let model_route = |style, seg: &str| {
        model_and_method(seg).map(|(model, method)| ApiRoute::Model {
            style,
            model,
            method,
        })
    };
    let found = match segments.as_slice() {
        ["__admin", "health"] if is_get => return Route::Admin(AdminRoute::Health),
        ["__admin", "reset"] if is_post => return Route::Admin(AdminRoute::Reset),
        ["__admin", "requests"] if is_get => return Route::Admin(AdminRoute::Requests),
        [ver, "models"] if is_get && VERSIONS.contains(ver) => Some(ApiRoute::ListModels),
        [ver, "models" | "tunedModels", seg] if is_post && VERSIONS.contains(ver) => {
            model_route(ApiStyle::Gemini, seg)
        }
        [
            ver,
            "projects",
            _,
            "locations",
            _,
            "publishers",
            "google",
            "models",
            seg,
        ]
        | [ver, "publishers", "google", "models", seg]
            if is_post && VERSIONS.contains(ver) =>
        {
            model_route(ApiStyle::Vertex, seg)
        }
        ["v1internal", "operations", rest @ ..] if is_get && !rest.is_empty() => {
            Some(ApiRoute::CodeAssistOperation {
                name: format!("operations/{}", rest.join("/")),
            })
        }
        [seg] if is_post => seg
            .strip_prefix("v1internal:")
            .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_alphabetic()))
            .map(|m| ApiRoute::CodeAssist {
                method: m.to_string(),
            }),
        _ => None,
    };
    Route::Api(found.unwrap_or(ApiRoute::Unknown {
        style: ApiStyle::guess(path),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(style: ApiStyle, m: &str, meth: &str) -> Route {
        Route::Api(ApiRoute::Model {
            style,
            model: m.into(),
            method: meth.into(),
        })
    }

    #[test]
    fn routes_all_styles() {
        let p = Method::POST;
        assert_eq!(
            route(&p, "/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
            model(
                ApiStyle::Gemini,
                "gemini-2.5-flash",
                "streamGenerateContent"
            )
        );
        assert_eq!(
            route(
                &p,
                "/v1/projects/pr/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent"
            ),
            model(ApiStyle::Vertex, "gemini-2.5-pro", "generateContent")
        );
        assert_eq!(
            route(&p, "/v1beta1/publishers/google/models/m:countTokens"),
            model(ApiStyle::Vertex, "m", "countTokens")
        );
        assert_eq!(
            route(&p, "/v1internal:generateContent"),
            Route::Api(ApiRoute::CodeAssist {
                method: "generateContent".into()
            })
        );
        assert_eq!(
            route(&Method::GET, "/v1internal/operations/onboard-1"),
            Route::Api(ApiRoute::CodeAssistOperation {
                name: "operations/onboard-1".into()
            })
        );
        assert_eq!(
            route(&Method::GET, "/v1beta/models"),
            Route::Api(ApiRoute::ListModels)
        );
        assert_eq!(
            route(&Method::POST, "/__admin/reset"),
            Route::Admin(AdminRoute::Reset)
        );
    }

    #[test]
    fn unknown_paths_keep_a_style_guess() {
        assert_eq!(
            route(&Method::GET, "/v1beta/models/m:generateContent"),
            Route::Api(ApiRoute::Unknown {
                style: ApiStyle::Gemini
            })
        );
        assert_eq!(
            route(&Method::POST, "/v2/models/m:generateContent"),
            Route::Api(ApiRoute::Unknown {
                style: ApiStyle::Gemini
            })
        );
        assert_eq!(
            route(&Method::POST, "/v1beta/models/m:gen-x"),
            Route::Api(ApiRoute::Unknown {
                style: ApiStyle::Gemini
            })
        );
        assert_eq!(
            route(&Method::POST, "/v1internal:loadCodeAssist2"),
            Route::Api(ApiRoute::Unknown {
                style: ApiStyle::CodeAssist
            })
        );
        assert_eq!(
            route(&Method::POST, "/v1/projects/p/x"),
            Route::Api(ApiRoute::Unknown {
                style: ApiStyle::Vertex
            })
        );
    }
}
