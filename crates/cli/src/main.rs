//! `gemini-desktop-cli`: run the agent headless, like `gemini -p`.

fn main() {
    std::process::exit(gd_cli::main_entry());
}
