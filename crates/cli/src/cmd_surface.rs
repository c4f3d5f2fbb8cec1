//! `diskmeter surface`: options → app::surface, then the results and the exit.

use crate::args::SurfaceArgs;
use crate::progress::Progress;
use crate::{signals, Outcome};
use app::output::{sanitize, OutputOptions, Outputs};
use app::surface::{self, Ending};

impl SurfaceArgs {
    fn options(&self) -> surface::Options {
        surface::Options {
            target: self.target_pos.clone().or_else(|| self.target.clone()),
            mode: self.mode.clone(),
            block: self.block.clone(),
            offset: self.offset.clone(),
            size: self.size.clone(),
            sample: self.sample.clone(),
            qd: self.qd.clone(),
            zones: self.zones.clone(),
            slow_factor: self.slow_factor.clone(),
            slow_window: self.slow_window.clone(),
            slow_floor: self.slow_floor.clone(),
            rereads: self.rereads.clone(),
            access: self.access.clone(),
            access_only: self.access_only,
            pattern: self.pattern.clone(),
            patterns: self.patterns.clone(),
            badblocks_out: self.badblocks_out.clone(),
            fs_block: self.fs_block.clone(),
            buffered: self.buffered,
            overwrite: self.overwrite,
            destroy_data: self.destroy_data.clone(),
            seed: self.seed,
            force: self.out.force,
        }
    }
}

pub fn run(a: &SurfaceArgs) -> Outcome {
    // Output paths are checked before anything runs.
    let outputs = Outputs::plan(&OutputOptions::from(&a.out))?;
    let cfg = surface::Config::new(&a.options())?;
    let stop = signals::install();
    let mut progress = Progress::new(a.out.quiet);
    let scanned = surface::run(&cfg, &stop, &mut progress);
    drop(progress);
    let mut outcome = scanned.inspect_err(|e| {
        if a.out.json && !e.is_usage() {
            let doc = app::session::error_doc("surface", "io", e.message());
            println!("{}", report::render(&doc, report::Format::Json).trim_end());
        }
    })?;
    signals::name_in(&mut outcome.doc);
    outputs.write(&outcome.doc).map_err(|e| app::Error::runtime(e.message()))?;
    let ending = Ending::of(&outcome);
    if let Some(line) = ending.line(!(a.out.json || a.out.quiet)) {
        eprintln!("{}", sanitize(&line));
    }
    Ok(ending.exit_code())
}
