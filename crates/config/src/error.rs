use std::fmt;

/// A configuration that cannot be used, with where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The file (or scenario key) the text came from, when known.
    pub file: Option<String>,
    /// 1-based line in that file, when known.
    pub line: Option<u32>,
    /// The element or property concerned, e.g. `maxResources` or `yarn.scheduler.minimum-allocation-mb`.
    pub element: Option<String>,
    pub message: String,
}

impl ConfigError {
    pub fn new(message: impl Into<String>) -> Self {
        Self { file: None, line: None, element: None, message: message.into() }
    }

    pub fn at(mut self, line: u32) -> Self {
        self.line = Some(line);
        self
    }

    pub fn element(mut self, element: impl Into<String>) -> Self {
        self.element = Some(element.into());
        self
    }

    /// Attach the file name unless one is already set.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        if self.file.is_none() {
            self.file = Some(file.into());
        }
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: ")?,
            (Some(file), None) => write!(f, "{file}: ")?,
            (None, Some(line)) => write!(f, "line {line}: ")?,
            (None, None) => {}
        }
        if let Some(element) = &self.element {
            write!(f, "{element}: ")?;
        }
        f.write_str(&self.message)
    }
}

pub type Result<T> = std::result::Result<T, ConfigError>;
