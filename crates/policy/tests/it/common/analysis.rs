//! The analysis under test (`gd_policy::shell::analyze`), reduced to what the
//! invariant needs: whether it proves what runs, and the names of the
//! commands it lists.

/// What the analysis says about one command line.
#[derive(Debug, Clone)]
pub struct Facts {
    /// False: the analysis cannot prove what runs (the policy asks).
    pub proven: bool,
    /// The listed commands' names (`None`: not a static name).
    pub names: Vec<Option<String>>,
    /// The listed commands' texts, for reports.
    pub texts: Vec<String>,
    /// Why it is unproven, for reports.
    pub unproven: Vec<String>,
}

pub fn facts(cmd: &str) -> Facts {
    let a = gd_policy::shell::analyze(cmd);
    Facts {
        proven: a.is_proven(),
        names: a.commands.iter().map(|c| c.name.clone()).collect(),
        texts: a.commands.iter().map(|c| c.text.clone()).collect(),
        unproven: a.unproven.clone(),
    }
}
