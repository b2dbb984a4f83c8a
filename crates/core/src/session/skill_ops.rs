//! `Op::ListSkills` (which looks for the skills again first) and
//! `Op::SetSkillEnabled`: answered at once, also while a turn runs (a
//! disabled or new skill changes the declarations from the next request
//! on).

use gd_protocol::{Event, Op};

use crate::events::EventSink;
use crate::skills::{SkillCatalog, enablement};

use super::op_loop::CommandSources;

pub(super) fn take(op: Op, skills: &SkillCatalog, sources: &CommandSources, sink: &EventSink) {
    // Listing looks in the skill folders again (0.61's `/skills reload`):
    // a skill written or edited meanwhile is there from the next request.
    if matches!(op, Op::ListSkills) {
        skills.reload();
    }
    if let Op::SetSkillEnabled {
        name,
        enabled,
        scope,
    } = op
        && let Err(message) = set(skills, sources, &name, enabled, scope)
    {
        sink.emit(Event::Warning { message });
    }
    sink.emit(Event::Skills {
        skills: skills.infos(),
        errors: skills.error_infos(),
    });
}

fn set(
    skills: &SkillCatalog,
    sources: &CommandSources,
    name: &str,
    enabled: bool,
    scope: gd_protocol::SettingsScope,
) -> Result<(), String> {
    if !skills
        .all()
        .iter()
        .any(|s| s.name.eq_ignore_ascii_case(name))
    {
        return Err(format!("There is no skill named \"{name}\"."));
    }
    let (Some(home), Some(workspace)) = (&sources.home, &sources.workspace) else {
        return Err("This session has no settings folder to save the change in.".into());
    };
    enablement::change(scope, home, workspace, name, enabled)?;
    skills.set_enabled(name, enabled);
    Ok(())
}
