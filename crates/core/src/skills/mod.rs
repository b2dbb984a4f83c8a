//! Agent skills (Gemini CLI 0.61's `activate_skill`): `SKILL.md` folders
//! whose name and description are declared to the model, and whose
//! instructions and resources it loads on demand.
