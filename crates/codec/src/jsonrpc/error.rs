use std::fmt;

use serde::{Deserialize, Serialize};

use super::Payload;

/// A JSON-RPC error code: an open set of integers, with the standard codes as
/// constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// MCP: the requested resource does not exist.
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// MCP: the request needs a URL-mode elicitation to complete first.
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

    /// The code's number.
    pub fn as_i32(self) -> i32 {
        self.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match *self {
            Self::PARSE_ERROR => "parse error",
            Self::INVALID_REQUEST => "invalid request",
            Self::METHOD_NOT_FOUND => "method not found",
            Self::INVALID_PARAMS => "invalid params",
            Self::INTERNAL_ERROR => "internal error",
            Self::RESOURCE_NOT_FOUND => "resource not found",
            Self::URL_ELICITATION_REQUIRED => "URL elicitation required",
            _ => return write!(f, "{}", self.0),
        };
        write!(f, "{} ({name})", self.0)
    }
}

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description.
    pub message: String,
    /// Extra information, as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Payload>,
}

impl ErrorObject {
    /// An error with no `data`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// Why a frame is not a valid JSON-RPC 2.0 message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvelopeError {
    /// The frame is not well-formed JSON (or not UTF-8).
    #[error("frame is not valid JSON")]
    Json(#[source] serde_json::Error),
    /// The frame is valid JSON but not an object (nor an array, where batches
    /// are accepted).
    #[error("frame is not a JSON object")]
    NotAnObject,
    /// The frame is a JSON array, and batches were not enabled.
    #[error("batches are not accepted here")]
    UnexpectedBatch,
    /// The frame is an empty array.
    #[error("empty batch")]
    EmptyBatch,
    /// `jsonrpc` is missing or not `"2.0"`.
    #[error("`jsonrpc` member is missing or not \"2.0\"")]
    WrongVersion,
    /// `id` is not an integer or a string (or is `null` on a request).
    #[error("`id` must be an integer or a string")]
    BadId,
    /// A response has no `id` member.
    #[error("response has no `id`")]
    MissingId,
    /// `method` is not a string.
    #[error("`method` must be a string")]
    BadMethod,
    /// `params` is neither an object nor an array.
    #[error("`params` must be an object or an array")]
    BadParams,
    /// `error` is not an object with an integer `code` and a string `message`.
    #[error("`error` must be an object with an integer `code` and a string `message`")]
    BadError,
    /// A message carries both `result` and `error`.
    #[error("message has both `result` and `error`")]
    ResultAndError,
    /// A message carries `method` and also `result` or `error`.
    #[error("message has `method` and also `result` or `error`")]
    MethodAndResult,
    /// The object has none of `method`, `result` and `error`.
    #[error("object is not a request, notification or response")]
    NotAMessage,
}
