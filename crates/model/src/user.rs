//! User names as they enter fairloom (the web's `user.name`, cookies, container tokens): a
//! name becomes a directory on every NodeManager and, with the Linux container executor, an
//! account to run as, so it is checked before anything is created for it.

/// YARN's `yarn.nodemanager.linux-container-executor.nonsecure-mode.user-pattern` default,
/// which is what a name may look like on a node.
pub const USER_PATTERN: &str = "^[_.A-Za-z0-9][-@_.A-Za-z0-9]{0,255}?[$]?$";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid user name '{shown}': {why} (it must match '{USER_PATTERN}' and not be '.' or '..')")]
pub struct UserNameError {
    /// The name with control characters escaped, so the message prints on one line.
    pub shown: String,
    pub why: &'static str,
}

/// Whether `name` is a user name fairloom accepts: YARN's pattern (a letter, digit, `_` or
/// `.` first; then up to 255 of letters, digits, `-`, `@`, `_`, `.`; an optional final `$`),
/// and not `.` or `..`, which the pattern lets through but a path must not.
pub fn check_user_name(name: &str) -> Result<(), UserNameError> {
    let fail = |why| Err(UserNameError { shown: name.escape_default().take(300).collect(), why });
    let body = name.strip_suffix('$').unwrap_or(name);
    let mut chars = body.chars();
    let Some(first) = chars.next() else { return fail("it is empty") };
    if !(first.is_ascii_alphanumeric() || first == '_' || first == '.') {
        return fail("it starts with a character other than a letter, a digit, '_' or '.'");
    }
    if chars.any(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '@' | '_' | '.'))) {
        return fail("it has a character other than letters, digits, '-', '@', '_' and '.'");
    }
    if body.len() > 256 {
        return fail("it is longer than 256 characters");
    }
    if body == "." || body == ".." {
        return fail("it names a directory");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yarns_pattern_and_no_path_tricks() {
        for ok in ["alice", "a", "_svc", ".hidden", "bob.smith", "x-y@REALM", "host$", "9lives"] {
            assert!(check_user_name(ok).is_ok(), "{ok}");
        }
        let long = "a".repeat(257);
        for bad in
            ["", "$", "../../../x", "a/b", "..", ".", "al ice", "tab\tx", "nul\0", "new\nline", "-x", "@x", "é", &long]
        {
            let e = check_user_name(bad).unwrap_err();
            assert!(!e.to_string().contains('\n') && !e.to_string().contains('\0'), "{e}");
        }
        assert!(check_user_name(&"a".repeat(256)).is_ok());
        let e = check_user_name("../x").unwrap_err().to_string();
        assert!(e.starts_with("Invalid user name '../x': it has a character"), "{e}");
    }
}
