//! The orchestrator's permission check (seed 003 trace `PermissionCheck`): the visitor's
//! effective scopes and readable departments, only from the verified identity
//! (TEMPLATES.md §0.1, §3.3).

use alloc::string::String;
use alloc::vec::Vec;

use super::config::{AgentConfig, PermissionConfig};
use crate::identity::UserIdentity;

/// What one visitor may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// Effective scopes, sorted (`private`, `internal`, `public` — always with `public`).
    pub scopes: Vec<String>,
    /// Readable document departments, sorted.
    pub departments: Vec<String>,
    /// Whether the visitor's department restricted `departments`.
    pub restricted: bool,
}

impl Access {
    /// The access of `identity` (`None`: anonymous) under the site's settings:
    /// - anonymous → the site's anonymous scopes (default `["public"]`);
    /// - otherwise → `public` plus the claimed permissions the site allows (a claimed
    ///   scope the site does not use is ignored);
    /// - departments: the site's department map for the visitor's department, or every
    ///   department when the map does not list it (permissive by default).
    pub fn of(identity: Option<&UserIdentity>, config: &PermissionConfig) -> Self {
        let allowed = |scope: &String| config.allowed_scopes.contains(scope);
        let mut scopes: Vec<String> = match identity {
            None => config
                .anonymous_scopes
                .iter()
                .filter(|s| allowed(s))
                .cloned()
                .collect(),
            Some(user) => user
                .permissions
                .iter()
                .filter(|s| allowed(s))
                .cloned()
                .collect(),
        };
        scopes.push("public".into());
        scopes.sort();
        scopes.dedup();
        let department = identity.and_then(|u| u.department.as_ref());
        let mapped = department.and_then(|d| config.department_map.get(d));
        let (mut departments, restricted) = match mapped {
            Some(list) => (
                list.iter()
                    .filter(|d| config.departments.contains(d))
                    .cloned()
                    .collect::<Vec<_>>(),
                true,
            ),
            None => (config.departments.clone(), false),
        };
        departments.sort();
        departments.dedup();
        Self {
            scopes,
            departments,
            restricted,
        }
    }

    /// The departments `agent` retrieves from for this visitor: its own departments (or
    /// every one, for an agent without) that the visitor may read.
    pub fn agent_departments(&self, agent: &AgentConfig) -> Vec<String> {
        if agent.departments.is_empty() {
            return self.departments.clone();
        }
        self.departments
            .iter()
            .filter(|d| agent.departments.contains(d))
            .cloned()
            .collect()
    }

    /// Whether the visitor may use `agent` at all (it can read some department).
    pub fn may_use(&self, agent: &AgentConfig) -> bool {
        !self.agent_departments(agent).is_empty()
    }

    /// The departments in the order the seed shows them (`accessible_departments`):
    /// the site's configured order.
    pub fn accessible_in_order(&self, config: &PermissionConfig) -> Vec<String> {
        config
            .departments
            .iter()
            .filter(|d| self.departments.contains(d))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn user(permissions: &[&str], department: Option<&str>) -> UserIdentity {
        UserIdentity {
            sub: "u".into(),
            role: None,
            permissions: permissions.iter().map(|p| String::from(*p)).collect(),
            department: department.map(String::from),
        }
    }

    #[test]
    fn scopes_come_only_from_the_identity() {
        let config = PermissionConfig::default();
        assert_eq!(Access::of(None, &config).scopes, ["public"]);
        let internal = user(&["internal"], None);
        assert_eq!(
            Access::of(Some(&internal), &config).scopes,
            ["internal", "public"]
        );
        let private = user(&["private", "admin", "secret"], Some("hr"));
        let access = Access::of(Some(&private), &config);
        assert_eq!(access.scopes, ["private", "public"]);
        assert_eq!(access.departments, ["general", "hr", "it"]);
        assert!(!access.restricted);
    }

    #[test]
    fn the_department_map_restricts() {
        let mut config = PermissionConfig::default();
        config
            .department_map
            .insert("sales".into(), vec!["general".into(), "nowhere".into()]);
        let access = Access::of(Some(&user(&[], Some("sales"))), &config);
        assert_eq!(access.departments, ["general"]);
        assert!(access.restricted);
        let hr = super::super::config::seed_agents().remove(0);
        assert!(!access.may_use(&hr));
    }
}
