//! `<queuePlacementPolicy>`: the rules as configured, validated as YARN validates them.

use roxmltree::Node;

use crate::error::Result;
use crate::xml::{self, error_at, java_bool};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    Specified,
    User,
    PrimaryGroup,
    SecondaryGroupExistingQueue,
    NestedUserQueue,
    Default,
    Reject,
}

impl RuleKind {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "specified" => Self::Specified,
            "user" => Self::User,
            "primaryGroup" => Self::PrimaryGroup,
            "secondaryGroupExistingQueue" => Self::SecondaryGroupExistingQueue,
            "nestedUserQueue" => Self::NestedUserQueue,
            "default" => Self::Default,
            "reject" => Self::Reject,
            _ => return None,
        })
    }
}

/// One placement rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleConfig {
    pub kind: RuleKind,
    /// `create` attribute; YARN's default is true.
    pub create: bool,
    /// `queue` attribute of the default rule, with `root.` added.
    pub queue: Option<String>,
    /// The parent rule of `nestedUserQueue`.
    pub nested: Option<Box<RuleConfig>>,
    pub line: u32,
}

impl RuleConfig {
    pub fn new(kind: RuleKind, create: bool) -> Self {
        Self { kind, create, queue: None, nested: None, line: 0 }
    }

    /// A rule after which no later rule can run: YARN 3.x's rule table (`true`, `false` or
    /// the rule's `create` flag), and a rule with a nested parent rule only when both are
    /// terminal. `nestedUserQueue` with `secondaryGroupExistingQueue` inside may find no
    /// parent queue, so a rule after it is reachable.
    pub fn is_terminal(&self) -> bool {
        let own = match self.kind {
            RuleKind::Specified | RuleKind::SecondaryGroupExistingQueue => false,
            RuleKind::User | RuleKind::PrimaryGroup | RuleKind::Default | RuleKind::NestedUserQueue => self.create,
            RuleKind::Reject => true,
        };
        own && self.nested.as_ref().is_none_or(|parent| parent.is_terminal())
    }
}

fn parse_rule(element: Node<'_, '_>, warnings: &mut Vec<String>) -> Result<RuleConfig> {
    let name =
        element.attribute("name").ok_or_else(|| error_at(element, "a placement <rule> needs a name attribute"))?;
    let kind = RuleKind::parse(name).ok_or_else(|| error_at(element, format!("unknown placement rule '{name}'")))?;
    let create = element.attribute("create").is_none_or(java_bool);
    let queue = element.attribute("queue").map(|q| {
        let q = q.trim();
        if q == "root" || q.starts_with("root.") {
            q.to_string()
        } else {
            format!("root.{q}")
        }
    });
    let mut nested = None;
    for child in xml::elements(element) {
        if child.tag_name().name() == "rule" {
            nested = Some(Box::new(parse_rule(child, warnings)?));
        } else {
            warnings.push(format!(
                "line {}: <{}> inside a placement rule is ignored",
                xml::line_of(child),
                child.tag_name().name()
            ));
        }
    }
    if kind == RuleKind::NestedUserQueue {
        match nested.as_ref().map(|n| n.kind) {
            None => return Err(error_at(element, "nestedUserQueue needs a nested rule that names the parent queue")),
            Some(RuleKind::Reject | RuleKind::NestedUserQueue) => {
                return Err(error_at(
                    element,
                    "the rule nested in nestedUserQueue may not be reject or nestedUserQueue",
                ))
            }
            Some(_) => {}
        }
    } else if nested.is_some() {
        warnings
            .push(format!("line {}: only nestedUserQueue uses a nested rule; it is ignored", xml::line_of(element)));
        nested = None;
    }
    Ok(RuleConfig {
        kind,
        create,
        queue: if kind == RuleKind::Default { queue } else { None },
        nested,
        line: xml::line_of(element),
    })
}

/// The rules of a policy element, validated: the last rule must be terminal and no terminal
/// rule may come before it. An empty list means "use the generated policy".
pub fn parse_placement_policy(element: Node<'_, '_>) -> Result<(Vec<RuleConfig>, Vec<String>)> {
    let mut warnings = Vec::new();
    let mut rules = Vec::new();
    for child in xml::elements(element) {
        if child.tag_name().name() == "rule" {
            rules.push(parse_rule(child, &mut warnings)?);
        } else {
            warnings.push(format!(
                "line {}: <{}> in queuePlacementPolicy is ignored",
                xml::line_of(child),
                child.tag_name().name()
            ));
        }
    }
    validate(&rules).map_err(|m| error_at(element, m))?;
    Ok((rules, warnings))
}

pub fn validate(rules: &[RuleConfig]) -> std::result::Result<(), String> {
    for (i, rule) in rules.iter().enumerate() {
        if rule.is_terminal() && i + 1 < rules.len() {
            return Err(format!("rules after rule {} ({:?}) can never be reached", i + 1, rule.kind));
        }
    }
    match rules.last() {
        Some(last) if !last.is_terminal() => {
            Err("an application could get past the last placement rule without a queue: the last rule must be terminal"
                .to_string())
        }
        _ => Ok(()),
    }
}

/// YARN's policy for a file without one: `specified(create=A)`, `user(create=A)` if U,
/// then `default` if `!U || !A` (A = allow-undeclared-pools, U = user-as-default-queue).
pub fn generated_policy(allow_undeclared_pools: bool, user_as_default_queue: bool) -> Vec<RuleConfig> {
    let mut rules = vec![RuleConfig::new(RuleKind::Specified, allow_undeclared_pools)];
    if user_as_default_queue {
        rules.push(RuleConfig::new(RuleKind::User, allow_undeclared_pools));
    }
    if !user_as_default_queue || !allow_undeclared_pools {
        rules.push(RuleConfig::new(RuleKind::Default, true));
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> Result<(Vec<RuleConfig>, Vec<String>)> {
        let doc = xml::parse(text).unwrap();
        parse_placement_policy(doc.root_element())
    }

    #[test]
    fn terminal_rules() {
        assert!(policy("<p><rule name='specified'/><rule name='user' create='false'/></p>").is_err());
        assert!(policy("<p><rule name='specified'/><rule name='default'/><rule name='user'/></p>").is_err());
        assert!(policy("<p><rule/></p>").is_err());
        assert!(policy("<p><rule name='user'><rule/></rule></p>").is_err());
        assert!(policy("<p><rule name='nestedUserQueue'/></p>").is_err());
        assert!(policy("<p><rule name='astrology'/></p>").is_err());
        let (rules, warnings) = policy("<p><notarule/></p>").unwrap();
        assert!(rules.is_empty() && warnings.len() == 1);
        let (rules, _) = policy("<p><rule name='specified' create='false'/><rule name='nestedUserQueue'><rule name='default' queue='parent'/></rule></p>").unwrap();
        assert_eq!(rules[1].nested.as_ref().unwrap().queue.as_deref(), Some("root.parent"));
    }

    /// Every rule nested in nestedUserQueue, with both create flags, against YARN 3.x's table:
    /// terminal when the rule's own entry and its parent's are both terminal.
    #[test]
    fn nested_rules_are_terminal_only_when_both_are() {
        let table = [
            ("user", None),
            ("primaryGroup", None),
            ("secondaryGroupExistingQueue", Some(false)),
            ("specified", Some(false)),
            ("default", None),
        ];
        for (parent, fixed) in table {
            for outer in [true, false] {
                for inner in [true, false] {
                    let text = format!(
                        "<p><rule name='nestedUserQueue' create='{outer}'><rule name='{parent}' create='{inner}'/></rule><rule name='default'/></p>"
                    );
                    let parent_terminal = fixed.unwrap_or(inner);
                    let terminal = outer && parent_terminal;
                    // A terminal first rule makes the default after it unreachable.
                    assert_eq!(policy(&text).is_err(), terminal, "{text}");
                    let alone = format!(
                        "<p><rule name='nestedUserQueue' create='{outer}'><rule name='{parent}' create='{inner}'/></rule></p>"
                    );
                    // Alone, it must be terminal to be the last rule.
                    assert_eq!(policy(&alone).is_ok(), terminal, "{alone}");
                }
            }
        }
        // The case users meet: a secondary group's queue if one exists, else the default.
        let (rules, _) = policy(
            "<p><rule name='nestedUserQueue'><rule name='secondaryGroupExistingQueue'/></rule><rule name='default'/></p>",
        )
        .unwrap();
        assert!(!rules[0].is_terminal() && rules[1].is_terminal());
    }

    #[test]
    fn generated() {
        let kinds = |a, u| generated_policy(a, u).iter().map(|r| r.kind).collect::<Vec<_>>();
        assert_eq!(kinds(true, true), [RuleKind::Specified, RuleKind::User]);
        assert_eq!(kinds(false, false), [RuleKind::Specified, RuleKind::Default]);
        assert!(validate(&generated_policy(false, true)).is_ok());
    }
}
