//! Resource strings of the allocation file, in every form YARN accepts:
//! `"1024 mb, 2 vcores"`, `"50% memory, 25% cpu"`, `"50%"`, `"memory-mb=1024, vcores=2, yarn.io/gpu=1"`
//! and `"memory-mb=40%, vcores=75%"`.

use fairloom_model::{Resource, ResourceTypes, MAX_RESOURCE_TYPES, MEMORY, VCORES};

/// A resource as configured: absolute, or a fraction of the cluster per type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConfigurableResource {
    Absolute(Resource),
    /// Fraction (0.0–1.0+) of the cluster for each type, resolved when the cluster is known.
    Percentage([f64; MAX_RESOURCE_TYPES]),
}

impl ConfigurableResource {
    /// The resource against `cluster`: percentages truncate, as YARN's `(long)(cluster × p)`.
    pub fn resolve(&self, cluster: Resource, types: usize) -> Resource {
        match self {
            Self::Absolute(r) => *r,
            Self::Percentage(p) => {
                let mut r = Resource::none();
                for (i, fraction) in p.iter().enumerate().take(types) {
                    r.set(i, (cluster.get(i) as f64 * fraction) as i64);
                }
                r
            }
        }
    }

    pub fn is_percentage(&self) -> bool {
        matches!(self, Self::Percentage(_))
    }
}

/// Parse a resource string. `missing` is the value of a type the string does not name
/// (unbounded for maxima, 0 for minima), in new-style absolute form only.
pub fn parse_resource(value: &str, types: &ResourceTypes, missing: i64) -> Result<ConfigurableResource, String> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err("empty resource value".to_string());
    }
    if trimmed.contains('=') {
        if trimmed.contains('%') {
            new_style_percentage(trimmed, types)
        } else {
            new_style_absolute(trimmed, types, missing)
        }
    } else {
        let lower = trimmed.to_lowercase();
        if lower.contains('%') {
            old_style_percentage(&lower, types)
        } else {
            let memory = find_old_style(&lower, "mb")?;
            let vcores = find_old_style(&lower, "vcores")?;
            // Old style names only memory and vcores; other types take `missing`.
            let mut r = types.filled(missing);
            r.set(MEMORY, memory);
            r.set(VCORES, vcores);
            Ok(ConfigurableResource::Absolute(r))
        }
    }
}

/// The number right before the first `unit` that has one: `(-?\d+(\.\d*)?)\s*unit`, truncated.
fn find_old_style(value: &str, unit: &str) -> Result<i64, String> {
    for (at, _) in value.match_indices(unit) {
        let Some(number) = number_before(&value[..at]) else {
            continue;
        };
        let parsed: f64 = number.parse().map_err(|_| format!("Invalid value of {unit}: {number}"))?;
        if parsed < 0.0 {
            return Err(format!("Invalid value of {unit}: {number}"));
        }
        return Ok(parsed as i64);
    }
    Err(format!("Missing resource: {unit}"))
}

/// The `-?\d+(\.\d*)?` that ends `prefix` once trailing whitespace is dropped.
fn number_before(prefix: &str) -> Option<&str> {
    let body = prefix.trim_end();
    let bytes = body.as_bytes();
    let mut start = bytes.len();
    while start > 0 && (bytes[start - 1].is_ascii_digit() || bytes[start - 1] == b'.') {
        start -= 1;
    }
    if start > 0 && bytes[start - 1] == b'-' {
        start -= 1;
    }
    let candidate = &body[start..];
    let digits = candidate.trim_start_matches('-');
    // The regex requires digits first; a dot may only follow them, once.
    let valid = digits.as_bytes().first().is_some_and(u8::is_ascii_digit) && digits.matches('.').count() <= 1;
    valid.then_some(candidate)
}

/// `P%` followed by `unit`, as `((\d+)(\.\d*)?)\s*%\s*unit`.
fn find_percentage(value: &str, unit: &str) -> Result<f64, String> {
    let mut search = 0;
    while let Some(rel) = value[search..].find('%') {
        let at = search + rel;
        search = at + 1;
        if !value[at + 1..].trim_start().starts_with(unit) {
            continue;
        }
        if let Some(number) = number_before(&value[..at]) {
            if number.starts_with('-') {
                return Err(format!("Invalid percentage: {value}"));
            }
            return number.parse::<f64>().map_err(|_| format!("Invalid percentage: {value}"));
        }
    }
    if unit.is_empty() {
        Err(format!("Invalid percentage: {value}"))
    } else {
        Err(format!("Missing resource: {unit}"))
    }
}

fn old_style_percentage(value: &str, types: &ResourceTypes) -> Result<ConfigurableResource, String> {
    let mut p = [0.0; MAX_RESOURCE_TYPES];
    let parts: Vec<&str> = value.split(',').collect();
    if parts.len() == 1 {
        let all = find_percentage(parts[0], "")? / 100.0;
        for slot in p.iter_mut().take(types.len()) {
            *slot = all;
        }
    } else {
        p[MEMORY] = find_percentage(value, "memory")? / 100.0;
        p[VCORES] = find_percentage(value, "cpu")? / 100.0;
    }
    Ok(ConfigurableResource::Percentage(p))
}

fn pairs<'a>(value: &'a str, types: &ResourceTypes) -> Result<Vec<(usize, &'a str)>, String> {
    value
        .split(',')
        .map(|part| {
            let (name, v) = part
                .split_once('=')
                .filter(|(_, v)| !v.contains('='))
                .ok_or_else(|| format!("'{value}': every resource must be of the form name=value"))?;
            let name = name.trim();
            let index = types.index_of(name).ok_or_else(|| format!("'{value}': unknown resource type '{name}'"))?;
            Ok((index, v.trim()))
        })
        .collect()
}

fn new_style_absolute(value: &str, types: &ResourceTypes, missing: i64) -> Result<ConfigurableResource, String> {
    let mut r = types.filled(missing);
    for (index, v) in pairs(value, types)? {
        let parsed: i64 =
            v.parse().map_err(|_| format!("'{value}': '{v}' is not an integer (units are not allowed)"))?;
        if parsed < 0 {
            return Err(format!("'{value}': negative value for {}", types.name(index)));
        }
        r.set(index, parsed);
    }
    Ok(ConfigurableResource::Absolute(r))
}

fn new_style_percentage(value: &str, types: &ResourceTypes) -> Result<ConfigurableResource, String> {
    // Unlisted types mean 100%.
    let mut p = [0.0; MAX_RESOURCE_TYPES];
    for slot in p.iter_mut().take(types.len()) {
        *slot = 1.0;
    }
    for (index, v) in pairs(value, types)? {
        if !v.contains('%') {
            return Err(format!("'{value}': percentages and absolute values cannot be mixed"));
        }
        p[index] = find_percentage(v, "")? / 100.0;
    }
    Ok(ConfigurableResource::Percentage(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairloom_model::UNBOUNDED;

    fn types() -> ResourceTypes {
        ResourceTypes::with_extra(["test1"]).unwrap()
    }

    fn abs(v: &str) -> Resource {
        match parse_resource(v, &types(), UNBOUNDED).unwrap() {
            ConfigurableResource::Absolute(r) => r,
            other => panic!("{v}: {other:?}"),
        }
    }

    #[test]
    fn old_style_forms() {
        for v in [
            "2 vcores, 5120 mb",
            "5120 mb, 2 vcores",
            "2vcores,5120mb",
            "5120mb,2vcores",
            "5120mb   mb, 2    vcores",
            "5120 Mb, 2 vCores",
            "  5120 mb, 2 vcores  ",
            "  5120.3 mb, 2.35 vcores  ",
            "  5120. mb, 2. vcores  ",
            "1024 mb 1 vcores",
        ] {
            let r = abs(v);
            assert!(r.memory() == 5120 || r.memory() == 1024, "{v}");
            assert!(r.vcores() == 2 || r.vcores() == 1, "{v}");
        }
    }

    #[test]
    fn old_style_errors() {
        let t = types();
        assert_eq!(parse_resource("1024 mb", &t, 0).unwrap_err(), "Missing resource: vcores");
        assert_eq!(parse_resource("2 vcores", &t, 0).unwrap_err(), "Missing resource: mb");
        assert!(parse_resource("-5 mb, 2 vcores", &t, 0).unwrap_err().contains("Invalid value"));
        assert!(parse_resource("", &t, 0).is_err());
        assert!(parse_resource("50% memory, 1024 mb", &t, 0).is_err());
        assert!(parse_resource("-50%", &t, 0).is_err());
    }

    #[test]
    fn percentages_resolve_against_cluster() {
        let t = types();
        let cluster = Resource::from_values(&[10240, 4, 8]);
        let r = |v| parse_resource(v, &t, UNBOUNDED).unwrap().resolve(cluster, 3);
        assert_eq!(r("50%"), Resource::from_values(&[5120, 2, 4]));
        assert_eq!(r("vcores=75%, memory-mb=40%"), Resource::from_values(&[4096, 3, 8]));
        assert_eq!(r(" vcores = 75 % , memory-mb = 40 % "), Resource::from_values(&[4096, 3, 8]));
        assert_eq!(r("vcores=75%, memory-mb=40%, test1=50%"), Resource::from_values(&[4096, 3, 4]));
        assert_eq!(r("50% memory, 25% cpu"), Resource::from_values(&[5120, 1, 0]));
        assert!(parse_resource("vcores=75%, memory-mb=1024", &t, 0).is_err());
    }

    #[test]
    fn new_style_absolute_values() {
        let r = abs("memory-mb=1024, vcores=2");
        assert_eq!(r, Resource::from_values(&[1024, 2, UNBOUNDED]));
        let t = types();
        assert_eq!(
            parse_resource("vcores=2", &t, 0).unwrap(),
            ConfigurableResource::Absolute(Resource::from_values(&[0, 2, 0]))
        );
        assert!(parse_resource("memory-mb=1Gi", &t, 0).is_err());
        assert!(parse_resource("gpus=1", &t, 0).unwrap_err().contains("unknown resource type"));
        assert!(parse_resource("memory-mb=1=2", &t, 0).is_err());
    }
}
