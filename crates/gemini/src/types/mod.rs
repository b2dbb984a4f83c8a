//! Serde types for the Gemini `generateContent` family, shared by the
//! Gemini API, Vertex AI and Code Assist transports.

mod content;
mod request;
mod response;

pub use content::{Blob, Content, FileData, FunctionCall, FunctionResponse, Part, Role};
pub use request::{
    CountTokensRequest, FunctionDeclaration, GenerateContentRequest, GenerationConfig,
    ThinkingConfig, Tool,
};
pub use response::{
    Candidate, CountTokensResponse, FinishReason, GenerateContentResponse, PromptFeedback,
    UsageMetadata,
};
