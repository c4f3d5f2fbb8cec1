//! `diskmeter completions SHELL` (hidden): the shell's completion script on stdout, generated
//! from the same clap definitions as `--help`. Packages install it; a user who installs by hand
//! runs, e.g., `diskmeter completions bash > ~/.local/share/bash-completion/completions/diskmeter`.

use crate::output::Outcome;
use clap::Args;
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, powershell or elvish.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

/// Writes the script for `a.shell` of the command line `cli` (the whole `diskmeter` command).
/// The hidden commands (this one, `man`) are left out: they are for packagers, not for Tab.
pub fn run(a: &CompletionsArgs, cli: clap::Command) -> Outcome {
    let visible: Vec<clap::Command> = cli.get_subcommands().filter(|s| !s.is_hide_set()).cloned().collect();
    let mut cli = clap::Command::new("diskmeter").version(env!("DISKMETER_VERSION_LINE")).subcommands(visible);
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cli, "diskmeter", &mut script);
    let script = String::from_utf8(script)
        .map_err(|e| app::Error::runtime(format!("the {} completion script is not UTF-8: {e}", a.shell)))?;
    app::output::print_stdout(&script)?;
    Ok(0)
}
