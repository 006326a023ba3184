//! `knowledge`'s site settings (`PATCH /admin/site` `{"knowledge": {…}}`), as stored and
//! returned by the admin API; each part left out keeps seed 003's defaults.

use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::config::{
    AgentConfig, ConflictRules, KnowledgeConfig, PermissionConfig, WorkflowConfig,
};

/// `knowledge`'s site settings.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KnowledgeSettings {
    /// The agents (default: the seed's `hr`, `it`, `general`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<AgentConfig>>,
    /// Seed §8 workflow and agent configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowConfig>,
    /// Seed §4.1 conflict-resolution rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<ConflictRules>,
    /// Scopes, anonymous scopes, departments and the department map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<PermissionConfig>,
}

impl KnowledgeSettings {
    /// `config` with the parts these settings set.
    pub fn apply(&self, config: &mut KnowledgeConfig) {
        if let Some(agents) = &self.agents {
            config.agents = agents.clone();
        }
        if let Some(workflow) = &self.workflow {
            config.workflow = workflow.clone();
        }
        if let Some(rules) = &self.rules {
            config.rules = rules.clone();
        }
        if let Some(permissions) = &self.permissions {
            config.permissions = permissions.clone();
        }
    }
}
