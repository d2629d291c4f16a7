//! Where a client command finds the ResourceManager, as Hadoop's clients do: `--rm` when
//! given; else `yarn.resourcemanager.webapp.address` (or `yarn.resourcemanager.hostname`) in
//! the yarn-site.xml of `--conf DIR`, `$YARN_CONF_DIR` or `$HADOOP_CONF_DIR`, in that order;
//! else YARN's default, port 8088 on this machine.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct RmTarget {
    /// The RM's web address (http://HOST:PORT); overrides any configuration.
    #[arg(long, value_name = "URL")]
    pub rm: Option<String>,
    /// A Hadoop configuration directory whose yarn-site.xml names the RM (default:
    /// $YARN_CONF_DIR, then $HADOOP_CONF_DIR).
    #[arg(long, value_name = "DIR")]
    pub conf: Option<PathBuf>,
}

impl RmTarget {
    /// The RM's web address, `http://HOST:PORT`.
    pub fn url(&self) -> Result<String> {
        self.url_with(|name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from))
    }

    fn url_with(&self, env: impl Fn(&str) -> Option<PathBuf>) -> Result<String> {
        if let Some(rm) = &self.rm {
            let rm = rm.trim_end_matches('/');
            return Ok(if rm.contains("://") { rm.to_string() } else { format!("http://{rm}") });
        }
        let dir = match &self.conf {
            Some(d) => Some((d.clone(), "--conf")),
            None => ["YARN_CONF_DIR", "HADOOP_CONF_DIR"].into_iter().find_map(|v| env(v).map(|d| (d, v))),
        };
        let Some((dir, from)) = dir else { return Ok("http://127.0.0.1:8088".to_string()) };
        from_site(&dir, from)
    }
}

fn from_site(dir: &Path, from: &str) -> Result<String> {
    let site = fairloom_rm::conf::read_site(dir).map_err(|e| anyhow::anyhow!("{e} (from {from})"))?;
    if site.get("yarn.http.policy").is_some_and(|p| p.trim().eq_ignore_ascii_case("HTTPS_ONLY")) {
        bail!("{}: yarn.http.policy HTTPS_ONLY is not supported: fairloom's clients speak HTTP", dir.display());
    }
    // Host names are a client's to resolve (the RM itself binds addresses).
    let host = site.get("yarn.resourcemanager.hostname").map(|h| h.trim().to_string());
    let host = host.filter(|h| !h.is_empty()).unwrap_or_else(|| "127.0.0.1".to_string());
    let text = site.get("yarn.resourcemanager.webapp.address").map(|a| a.trim().to_string());
    let text = text.unwrap_or_else(|| format!("{host}:8088")).replace("${yarn.resourcemanager.hostname}", &host);
    let Some((name, port)) = text.rsplit_once(':').filter(|(n, p)| !n.is_empty() && p.parse::<u16>().is_ok()) else {
        bail!("{}/yarn-site.xml: yarn.resourcemanager.webapp.address '{text}' is not HOST:PORT", dir.display());
    };
    // An RM bound to every interface is reached on this machine's loopback.
    let name = if name == "0.0.0.0" { "127.0.0.1" } else { name };
    Ok(format!("http://{name}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf_dir(name: &str, site: Option<&str>) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fairloom-rm-target-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        if let Some(text) = site {
            std::fs::write(d.join("yarn-site.xml"), text).unwrap();
        }
        d
    }

    fn site(key: &str, value: &str) -> String {
        format!("<configuration><property><name>{key}</name><value>{value}</value></property></configuration>")
    }

    #[test]
    fn the_rm_is_found_as_hadoop_clients_find_it() {
        let none = |_: &str| None;
        let t = |rm: Option<&str>, conf: Option<&Path>| RmTarget {
            rm: rm.map(String::from),
            conf: conf.map(Path::to_path_buf),
        };
        assert_eq!(t(None, None).url_with(none).unwrap(), "http://127.0.0.1:8088");
        let web = conf_dir("web", Some(&site("yarn.resourcemanager.webapp.address", "127.0.0.1:18088")));
        let host = conf_dir("host", Some(&site("yarn.resourcemanager.hostname", "127.0.0.7")));
        let any = conf_dir("any", Some(&site("yarn.resourcemanager.webapp.address", "0.0.0.0:28088")));
        let empty = conf_dir("empty", None);
        assert_eq!(t(None, Some(&web)).url_with(none).unwrap(), "http://127.0.0.1:18088");
        assert_eq!(t(None, Some(&host)).url_with(none).unwrap(), "http://127.0.0.7:8088");
        assert_eq!(t(None, Some(&any)).url_with(none).unwrap(), "http://127.0.0.1:28088");
        assert_eq!(t(None, Some(&empty)).url_with(none).unwrap(), "http://127.0.0.1:8088");
        // --rm wins over everything; a bare HOST:PORT is an http address.
        assert_eq!(t(Some("10.0.0.1:9999/"), Some(&web)).url_with(none).unwrap(), "http://10.0.0.1:9999");
        // YARN_CONF_DIR before HADOOP_CONF_DIR, --conf before both.
        let env = |v: &str| match v {
            "YARN_CONF_DIR" => Some(host.clone()),
            "HADOOP_CONF_DIR" => Some(web.clone()),
            _ => None,
        };
        assert_eq!(t(None, None).url_with(env).unwrap(), "http://127.0.0.7:8088");
        let hadoop_only = |v: &str| (v == "HADOOP_CONF_DIR").then(|| web.clone());
        assert_eq!(t(None, None).url_with(hadoop_only).unwrap(), "http://127.0.0.1:18088");
        assert_eq!(t(None, Some(&any)).url_with(env).unwrap(), "http://127.0.0.1:28088");
        // A directory that is not there is an error naming where it came from.
        let e = t(None, Some(Path::new("/no/such/conf"))).url_with(none).unwrap_err().to_string();
        assert!(e.contains("/no/such/conf: no such configuration directory (from --conf)"), "{e}");
        let gone = |v: &str| (v == "HADOOP_CONF_DIR").then(|| PathBuf::from("/no/such/hadoop"));
        let e = t(None, None).url_with(gone).unwrap_err().to_string();
        assert!(e.contains("(from HADOOP_CONF_DIR)"), "{e}");
        let https = conf_dir("https", Some(&site("yarn.http.policy", "HTTPS_ONLY")));
        let e = t(None, Some(&https)).url_with(none).unwrap_err().to_string();
        assert!(e.contains("HTTPS_ONLY is not supported"), "{e}");
        let named = conf_dir("named", Some(&site("yarn.resourcemanager.webapp.address", "rm.example.com:8088")));
        assert_eq!(t(None, Some(&named)).url_with(none).unwrap(), "http://rm.example.com:8088");
        let bad = conf_dir("bad", Some(&site("yarn.resourcemanager.webapp.address", "rm.example.com")));
        let e = t(None, Some(&bad)).url_with(none).unwrap_err().to_string();
        assert!(e.contains("'rm.example.com' is not HOST:PORT"), "{e}");
        for d in [web, host, any, empty, https, named, bad] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}
